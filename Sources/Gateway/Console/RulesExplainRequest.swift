import PortcullisCore
import Rules
import Service

/// Decodes the body of `POST /admin/v1/rules/explain` into the `RulesRequest` the rules judge.
///
/// The fields mean what they mean in `portcullis rules test` cases (docs/testing.md): claims become `request.auth`
/// as a live token's would (`sub`, else `user_id`, gives the uid), and metadata in the v0 wire format is
/// converted as a live request's is (`RulesTestFile` does both, so the playground and the test runner cannot
/// drift apart). Unknown keys are ignored.
enum RulesExplainRequest {
    /// The request, and for `list` the live listing's `prefix` when the body gives one (then the folder judged
    /// is derived from it as for a live listing, `ListScope`, not from `path`).
    static func decode(_ body: [UInt8]) throws(ServiceError) -> (RulesRequest, prefix: String?) {
        guard let fields = try JSONObjectBody.members(body) else {
            throw .badRequest("The request body must be a JSON object.")
        }
        guard let methodText = fields["method"]?.stringValue, let method = RulesMethod(rawValue: methodText) else {
            throw .badRequest("method must be one of get, list, create, update, delete.")
        }
        guard let bucket = fields["bucket"]?.stringValue, !bucket.isEmpty else {
            throw .badRequest("bucket must be a non-empty string.")
        }
        var prefix: String?
        if let value = fields["prefix"] {
            guard let text = value.stringValue else { throw .badRequest("prefix must be a string.") }
            // Only a listing has a prefix; for the other methods it means nothing.
            if method == .list { prefix = text }
        }
        guard let path = fields["path"]?.stringValue else { throw .badRequest("path must be a string.") }
        var time = Timestamp.now()
        if let value = fields["time"], !value.isNull {
            guard let text = value.stringValue, isTime(text), let parsed = Timestamp(rfc3339: text) else {
                throw .badRequest("time must be an RFC 3339 timestamp between 1970 and 2199.")
            }
            time = parsed
        }
        var auth: Principal?
        if let value = fields["auth"], !value.isNull {
            guard let claims = value.objectValue else { throw .badRequest("auth must be a claims object or null.") }
            auth = RulesTestFile.principal(claims)
        }
        var delimiter: String?
        if let value = fields["delimiter"], !value.isNull {
            guard let text = value.stringValue else { throw .badRequest("delimiter must be a string.") }
            delimiter = text
        }
        let request = RulesRequest(
            method: method, bucket: bucket, path: path, auth: auth, time: time,
            resource: try metadata(fields["resource"], "resource", bucket, path),
            requestResource: try metadata(fields["requestResource"], "requestResource", bucket, path),
            delimiter: delimiter)
        return (request, prefix)
    }

    private static func metadata(_ value: JSONValue?, _ key: String, _ bucket: String, _ path: String)
        throws(ServiceError) -> ObjectMetadata?
    {
        if let fields = value?.objectValue {
            for name in ["size", "generation", "metageneration"] {
                guard let field = fields[name], !field.isNull else { continue }
                guard isInteger(field) else {
                    throw .badRequest(
                        "\(key).\(name) must be an integer (at most 18 digits), as a number or a decimal string.")
                }
            }
            for name in ["timeCreated", "updated"] {
                guard let field = fields[name], !field.isNull else { continue }
                guard let text = field.stringValue, isTime(text) else {
                    throw .badRequest("\(key).\(name) must be an RFC 3339 timestamp between 1970 and 2199.")
                }
            }
        }
        do {
            return try RulesTestFile.metadata(value, bucket: bucket, name: path)
        } catch {
            throw .badRequest("\(key): \(error)")
        }
    }

    // The shapes the OpenAPI document promises (ExplainInteger, ExplainTime), checked here so that what it
    // calls valid is accepted and what it calls invalid is refused.

    static let largestInteger: Int64 = 999_999_999_999_999_999

    /// A JSON integer, or a decimal string of at most 18 digits with an optional `-`.
    static func isInteger(_ value: JSONValue) -> Bool {
        if let text = value.stringValue {
            var digits = text.utf8[...]
            if digits.first == UInt8(ascii: "-") { digits = digits.dropFirst() }
            return (1...18).contains(digits.count) && digits.allSatisfy { (48...57).contains($0) }
        }
        guard let number = value.int64Value else { return false }
        return (-largestInteger...largestInteger).contains(number)
    }

    /// RFC 3339 with a year from 1970 to 2199 (a range every backend and `Timestamp` holds): the pattern
    /// `ExplainTime` in openapi/portcullis.yaml.
    static func isTime(_ text: String) -> Bool {
        let b = Array(text.utf8)
        func number(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= b.count else { return nil }
            var value = 0
            for byte in b[start..<(start + count)] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        func byte(_ i: Int, _ options: String) -> Bool { i < b.count && options.utf8.contains(b[i]) }
        guard let year = number(0, 4), (1970...2199).contains(year), byte(4, "-"),
            let month = number(5, 2), (1...12).contains(month), byte(7, "-"),
            let day = number(8, 2), (1...31).contains(day), byte(10, "Tt"),
            let hour = number(11, 2), hour < 24, byte(13, ":"), let minute = number(14, 2), minute < 60,
            byte(16, ":"), let second = number(17, 2), second < 60
        else { return false }
        var i = 19
        if byte(i, ".") {
            i += 1
            let start = i
            while byte(i, "0123456789") { i += 1 }
            guard (1...9).contains(i - start) else { return false }
        }
        if byte(i, "Zz") { return i + 1 == b.count }
        guard byte(i, "+-"), i + 6 == b.count, let offsetHours = number(i + 1, 2), offsetHours < 24, byte(i + 3, ":"),
            let offsetMinutes = number(i + 4, 2), offsetMinutes < 60
        else { return false }
        return true
    }
}
