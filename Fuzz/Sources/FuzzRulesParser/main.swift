// libFuzzer target for the rules compiler: arbitrary bytes must compile or fail with diagnostics, never crash
// or hang. Whatever compiles is also evaluated against a few requests (the evaluator must not crash either).
import PortcullisCore
import Rules

private let requests: [RulesRequest] = {
    let time = Timestamp(rfc3339: "2026-01-15T12:00:00Z")!
    let meta = ObjectMetadata(
        bucket: "b", name: "a/b/c.png", generation: 1, size: 10, timeCreated: time, updated: time,
        contentType: "image/png", customMetadata: ["owner": "u1"])
    let auth = Principal(uid: "u1", claims: ["sub": .string("u1"), "admin": .bool(true), "n": .int(-1)])
    return [
        RulesRequest(method: .get, bucket: "b", path: "a/b/c.png", auth: auth, time: time, resource: meta),
        RulesRequest(method: .create, bucket: "b", path: "a/b/c.png", auth: nil, time: time, requestResource: meta),
        RulesRequest(method: .list, bucket: "b", path: "a", auth: auth, time: time, delimiter: "/"),
        RulesRequest(method: .delete, bucket: "b", path: "", auth: auth, time: time),
    ]
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let source = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    do {
        let ruleset = try Ruleset.compile(source, fileName: "fuzz.rules")
            .with(debugHandler: { _ in }).with(warningHandler: { _ in })
        for request in requests {
            let decision = ruleset.explain(request)
            precondition(decision.allowed == ruleset.evaluate(request).allowed, "explain and evaluate disagree")
        }
    } catch {
        precondition(!error.diagnostics.isEmpty, "a compile error without diagnostics")
        for d in error.diagnostics { precondition(d.line >= 1 && d.column >= 1, "diagnostic without a position") }
    }
    return 0
}
