import PortcullisCore
import Rules
import Service

/// Decodes the body of `POST /admin/v1/rules/explain` into the `RulesRequest` the rules judge.
///
/// The fields mean what they mean in `portcullis rules test` cases (DESIGN §9): claims become `request.auth`
/// as a live token's would (`sub`, else `user_id`, gives the uid), and metadata in the v0 wire format is
/// converted as a live request's is (`RulesTestFile` does both, so the playground and the test runner cannot
/// drift apart). Unknown keys are ignored.
enum RulesExplainRequest {
    static func decode(_ body: [UInt8]) throws(ServiceError) -> RulesRequest {
        let root: JSONValue
        do {
            root = try JSONValue.parse(body)
        } catch {
            throw .badRequest("The body must be a JSON object: \(error)")
        }
        guard let fields = root.objectValue else { throw .badRequest("The body must be a JSON object.") }
        guard let methodText = fields["method"]?.stringValue, let method = RulesMethod(rawValue: methodText) else {
            throw .badRequest("method must be one of get, list, create, update, delete.")
        }
        guard let bucket = fields["bucket"]?.stringValue, !bucket.isEmpty else {
            throw .badRequest("bucket must be a non-empty string.")
        }
        guard let path = fields["path"]?.stringValue else { throw .badRequest("path must be a string.") }
        var time = Timestamp.now()
        if let value = fields["time"], !value.isNull {
            guard let text = value.stringValue, let parsed = Timestamp(rfc3339: text) else {
                throw .badRequest("time must be an RFC 3339 timestamp.")
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
        return RulesRequest(method: method, bucket: bucket, path: path, auth: auth, time: time,
                            resource: try metadata(fields["resource"], "resource", bucket, path),
                            requestResource: try metadata(fields["requestResource"], "requestResource", bucket, path),
                            delimiter: delimiter)
    }

    private static func metadata(_ value: JSONValue?, _ key: String, _ bucket: String, _ path: String)
        throws(ServiceError) -> ObjectMetadata? {
        do {
            return try RulesTestFile.metadata(value, bucket: bucket, name: path)
        } catch {
            throw .badRequest("\(key): \(error)")
        }
    }
}
