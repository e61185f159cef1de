import HTTPServer
import PortcullisCore
import Service

/// PATCH, DELETE, download-token administration and signed URLs (README.md).
extension V0API {
    func updateMetadata(_ call: V0Call, _ object: ObjectPath) async throws -> HTTPResponse {
        let patch = try ObjectResourceJSON.decodePatch(try await collectJSONBody(call))
        let meta = try await service.updateMetadata(
            object, .merge(patch),
            conditions: try RequestConditions.parse(call.query, call.headers),
            caller: call.caller, call.context)
        return Self.metadataResponse(meta)
    }

    func delete(_ call: V0Call, _ object: ObjectPath) async throws -> HTTPResponse {
        try await service.delete(
            object, conditions: try RequestConditions.parse(call.query, call.headers),
            caller: call.caller, call.context)
        return HTTPResponse(status: 204)
    }

    /// `create_token=true` / `delete_token=T` (admin only).
    func manageToken(_ call: V0Call, _ object: ObjectPath, delete token: String?) async throws -> HTTPResponse {
        Self.metadataResponse(
            try await service.manageDownloadToken(
                object, removing: token, caller: call.caller,
                call.context))
    }

    /// `POST ?signedUrl` `{"method":"GET"|"DELETE","expiresIn":seconds}` → `{"url","expiresAt"}` (an empty body,
    /// or one not declared as JSON, is ignored: GET for an hour; JSON that is not an object is 400).
    func signURL(_ call: V0Call, _ object: ObjectPath) async throws -> HTTPResponse {
        let fields =
            Self.bodyIsJSON(call) ? try JSONObjectBody.members(try await collectJSONBody(call)) ?? [:] : [:]
        let method: SignedMethod
        switch fields["method"] {
        case nil: method = .read
        case .string(let m)?:
            switch m.uppercased() {
            case "GET", "HEAD": method = .read
            case "DELETE": method = .delete
            default: throw ServiceError.badRequest("method must be GET or DELETE.")
            }
        default: throw ServiceError.badRequest("method must be a string.")
        }
        var expiresIn: Int64 = 3600
        if let value = fields["expiresIn"] {
            guard let seconds = value.int64Value else {
                throw ServiceError.badRequest(
                    "expiresIn must be an integer between 1 and \(StorageService.maxSignedURLSeconds).")
            }
            expiresIn = seconds
        }
        let signed = try await service.signURL(
            object, method: method, validFor: expiresIn, caller: call.caller,
            call.context)
        var url = objectURL(call, object) + "?"
        if method == .read { url += "alt=media&" }
        url += "signature=" + signed.signature
        var out = Array(#"{"url":"#.utf8)
        JSONValue.encodeString(url, into: &out)
        out.append(contentsOf: #","expiresAt":"#.utf8)
        JSONValue.encodeString(signed.expiresAt.rfc3339Milliseconds, into: &out)
        out.append(UInt8(ascii: "}"))
        return Self.json(out)
    }
}
