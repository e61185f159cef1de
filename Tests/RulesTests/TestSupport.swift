import PortcullisCore
import Synchronization

@testable import Rules

/// Helpers shared by the Rules test suites.
enum TS {
    static let bucket = "app.appspot.com"
    static let now = Timestamp(rfc3339: "2026-01-15T12:30:45.123Z")!

    static func meta(
        _ name: String = "a/b.txt", size: Int64 = 10, contentType: String? = "text/plain",
        custom: [String: String] = [:]
    ) -> ObjectMetadata {
        ObjectMetadata(
            bucket: bucket, name: name, generation: 1717171717171, metageneration: 3, size: size,
            timeCreated: Timestamp(rfc3339: "2024-05-31T16:08:37.171Z")!,
            updated: Timestamp(rfc3339: "2024-06-01T00:00:00Z")!,
            md5Hash: "XrY7u+Ae7tCTyyK7j1rNww==", crc32c: "yZRlqg==", contentType: contentType,
            contentEncoding: "identity",
            contentDisposition: "inline", contentLanguage: "en", customMetadata: custom)
    }

    static func request(
        _ method: RulesMethod = .get, _ path: String = "a/b.txt", uid: String? = nil, claims: [String: JSONValue] = [:],
        resource: ObjectMetadata? = nil, requestResource: ObjectMetadata? = nil
    ) -> RulesRequest {
        var all = claims
        if let uid { all["sub"] = .string(uid) }
        return RulesRequest(
            method: method, bucket: bucket, path: path, auth: uid.map { Principal(uid: $0, claims: all) }, time: now,
            resource: resource, requestResource: requestResource)
    }

    /// Evaluates `expr` as the condition of `allow get` in `match /b/{bucket}/o/{path=**}` and returns the value.
    static func value(
        _ expr: String, version: Int = 2, functions: String = "", request: RulesRequest = request(),
        hooks: RulesetHooks = RulesetHooks()
    ) throws -> Value {
        let source = """
            rules_version = '\(version)';
            \(functions)
            service firebase.storage {
              match /b/{bucket}/o/{path=**} {
                allow get: if \(expr);
              }
            }
            """
        let ruleset = try Ruleset.compile(source, fileName: "test.rules")
        let block = ruleset.program.blocks[0]
        return withUnsafePointer(to: request) { pointer in
            var evaluator = Evaluator(program: ruleset.program, request: pointer, hooks: hooks, explain: false)
            evaluator.frame[0] = .string(request.bucket)
            evaluator.frame[1] = .path(request.path.split(separator: "/").map(String.init))
            return evaluator.concrete(evaluator.evaluateTop(block.allows[0].condition!))
        }
    }

    /// The value rendered (`3`, `'x'`, `[1, 2]`), or `error` for any error.
    static func eval(_ expr: String, version: Int = 2, functions: String = "", request: RulesRequest = request())
        -> String
    {
        do {
            let v = try value(expr, version: version, functions: functions, request: request)
            if case .error = v { return "error" }
            return v.rendered
        } catch {
            return "compile error: \(error)"
        }
    }

    static func errorMessage(_ expr: String, request: RulesRequest = request()) -> String? {
        if case .error(let e)? = try? value(expr, request: request) { return e.message }
        return nil
    }

    /// Compile diagnostics as `line:col: message` (file name stripped), or [] when the source compiles.
    static func diagnostics(_ source: String) -> [String] {
        do {
            _ = try Ruleset.compile(source, fileName: "f.rules")
            return []
        } catch {
            return error.diagnostics.map { "\($0.line):\($0.column): \($0.message)" }
        }
    }

    /// Wraps an allow condition in a v2 (or v1) ruleset for compile tests.
    static func wrap(_ condition: String, version: Int = 2) -> String {
        "rules_version = '\(version)';\nservice firebase.storage {\n  match /b/{bucket}/o/{p=**} {\n    allow read: if \(condition);\n  }\n}\n"
    }
}

/// Thread-safe sink for debug/warning handler output.
final class Collected: Sendable {
    private let items = Mutex<[String]>([])
    func add(_ s: String) { items.withLock { $0.append(s) } }
    var all: [String] { items.withLock { $0 } }
}
