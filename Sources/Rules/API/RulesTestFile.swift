public import PortcullisCore

/// One case of a `rules test` file (docs/testing.md).
public struct RulesTestCase: Sendable {
    public var name: String
    public var request: RulesRequest
    public var expectAllow: Bool

    public init(name: String, request: RulesRequest, expectAllow: Bool) {
        self.name = name
        self.request = request
        self.expectAllow = expectAllow
    }
}

/// Why a case file was refused.
public struct RulesTestFileError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

/// Reader for CASES.json: `{"cases": [{"name", "method", "bucket", "path", "auth", "resource",
/// "requestResource", "time", "expect"}]}`. Metadata uses the v0 wire format (the object resource of openapi/portcullis.yaml) and is
/// converted the way live requests are; unknown keys are ignored.
public enum RulesTestFile {
    public static func parse(_ json: [UInt8]) throws -> [RulesTestCase] {
        let root: JSONValue
        do {
            root = try JSONValue.parse(json)
        } catch {
            throw RulesTestFileError(message: "cases file: \(error)")
        }
        guard let cases = root["cases"]?.arrayValue else {
            throw RulesTestFileError(message: "cases file: expected an object with a \"cases\" array")
        }
        var out: [RulesTestCase] = []
        for (i, c) in cases.enumerated() {
            out.append(try parseCase(c, index: i))
        }
        return out
    }

    static func parseCase(_ c: JSONValue, index: Int) throws -> RulesTestCase {
        func fail(_ message: String) -> RulesTestFileError {
            let name = c["name"]?.stringValue.map { " (\($0))" } ?? ""
            return RulesTestFileError(message: "case \(index)\(name): \(message)")
        }
        guard case .object = c else { throw fail("a case must be an object") }
        let name = c["name"]?.stringValue ?? "case \(index)"
        guard let methodText = c["method"]?.stringValue, let method = RulesMethod(rawValue: methodText) else {
            throw fail("\"method\" must be one of get, list, create, update, delete")
        }
        guard let bucket = c["bucket"]?.stringValue, !bucket.isEmpty else {
            throw fail("\"bucket\" must be a non-empty string")
        }
        guard let path = c["path"]?.stringValue else { throw fail("\"path\" must be a string") }
        let expectAllow: Bool
        switch c["expect"]?.stringValue?.lowercased() {
        case "allow": expectAllow = true
        case "deny": expectAllow = false
        default: throw fail("\"expect\" must be \"allow\" or \"deny\"")
        }
        var time = Timestamp.now()
        if let t = c["time"], !t.isNull {
            guard let s = t.stringValue, let parsed = Timestamp(rfc3339: s) else {
                throw fail("\"time\" must be an RFC 3339 timestamp")
            }
            time = parsed
        }
        var auth: Principal?
        if let a = c["auth"], !a.isNull {
            guard let claims = a.objectValue else { throw fail("\"auth\" must be a claims object or null") }
            auth = principal(claims)
        }
        let resource: ObjectMetadata?
        let requestResource: ObjectMetadata?
        do {
            resource = try metadata(c["resource"], bucket: bucket, name: path)
            requestResource = try metadata(c["requestResource"], bucket: bucket, name: path)
        } catch let e as RulesTestFileError {
            throw fail(e.message)
        }
        let delimiter = c["delimiter"]?.stringValue
        let request = RulesRequest(
            method: method, bucket: bucket, path: path, auth: auth, time: time, resource: resource,
            requestResource: requestResource, delimiter: delimiter)
        return RulesTestCase(name: name, request: request, expectAllow: expectAllow)
    }

    /// `request.auth` from a token's claims: uid from `sub`, else `user_id` (else `uid`, a test convenience).
    public static func principal(_ claims: [String: JSONValue]) -> Principal {
        let uid = claims["sub"]?.stringValue ?? claims["user_id"]?.stringValue ?? claims["uid"]?.stringValue ?? ""
        return Principal(uid: uid, claims: claims)
    }

    /// v0 wire metadata → `ObjectMetadata`. Numbers may be decimal strings or JSON numbers; timestamps are
    /// RFC 3339. Missing `name`/`bucket` default to the case's path and bucket, a missing `contentType` to
    /// `application/octet-stream` (what the gateway stores for an upload without one).
    public static func metadata(_ value: JSONValue?, bucket: String, name: String) throws -> ObjectMetadata? {
        guard let value, !value.isNull else { return nil }
        guard let o = value.objectValue else { throw RulesTestFileError(message: "metadata must be an object or null") }
        func int(_ key: String, _ dflt: Int64) throws -> Int64 {
            guard let v = o[key], !v.isNull else { return dflt }
            if let s = v.stringValue, let i = Int64(s) { return i }
            if let i = v.int64Value { return i }
            throw RulesTestFileError(message: "metadata \"\(key)\" must be a decimal integer string")
        }
        func time(_ key: String) throws -> Timestamp {
            guard let v = o[key], !v.isNull else { return Timestamp(nanosecondsSinceEpoch: 0) }
            guard let s = v.stringValue, let t = Timestamp(rfc3339: s) else {
                throw RulesTestFileError(message: "metadata \"\(key)\" must be an RFC 3339 timestamp")
            }
            return t
        }
        func string(_ key: String) -> String? { o[key]?.stringValue }
        var custom: [String: String] = [:]
        if let m = o["metadata"]?.objectValue {
            for (k, v) in m {
                switch v {
                case .string(let s): custom[k] = s
                case .null: continue
                case .bool(let b): custom[k] = b ? "true" : "false"
                case .int(let i): custom[k] = String(i)
                case .double(let d): custom[k] = "\(d)"
                default: custom[k] = v.encoded()
                }
            }
        }
        var tokens: [String] = []
        if let t = custom.removeValue(forKey: ObjectMetadata.downloadTokensKey) {
            tokens = t.bytesSplit(separator: UInt8(ascii: ","))
        }
        if let t = string("downloadTokens") { tokens = t.bytesSplit(separator: UInt8(ascii: ",")) }
        return ObjectMetadata(
            bucket: string("bucket") ?? bucket, name: string("name") ?? name,
            generation: try int("generation", 1), metageneration: try int("metageneration", 1),
            size: try int("size", 0), timeCreated: try time("timeCreated"), updated: try time("updated"),
            md5Hash: string("md5Hash"), crc32c: string("crc32c"), storageClass: string("storageClass") ?? "STANDARD",
            contentType: string("contentType") ?? "application/octet-stream",
            contentEncoding: string("contentEncoding"),
            contentDisposition: string("contentDisposition"), contentLanguage: string("contentLanguage"),
            cacheControl: string("cacheControl"), customMetadata: custom, downloadTokens: tokens)
    }
}

/// Runs cases against a ruleset, as `portcullis rules test` does.
public enum RulesTestRunner {
    /// Returns one line per failing case (`FAIL name: expected allow, got deny` plus the explanation when
    /// `explain`), and the counts. The CLI prints the lines, then `N passed, M failed`.
    public static func run(_ ruleset: Ruleset, cases: [RulesTestCase], explain: Bool) -> (
        lines: [String], passed: Int, failed: Int
    ) {
        var lines: [String] = []
        var passed = 0, failed = 0
        for c in cases {
            let decision = explain ? ruleset.explain(c.request) : ruleset.evaluate(c.request)
            if decision.allowed == c.expectAllow {
                passed += 1
                continue
            }
            failed += 1
            var line =
                "FAIL \(c.name): expected \(c.expectAllow ? "allow" : "deny"), got \(decision.allowed ? "allow" : "deny")"
            if explain, let why = decision.explanation {
                line += " — " + why.replacingNewlines
            }
            lines.append(line)
        }
        return (lines, passed, failed)
    }
}

extension String {
    var replacingNewlines: String {
        bytesSplit(separator: 0x0A).map { $0.trimmingASCIIWhitespace() }.joined(separator: "; ")
    }
}
