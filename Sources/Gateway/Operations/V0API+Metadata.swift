import Crypto
import HTTPServer
import PortcullisCore
import Storage

/// PATCH (§5.4), DELETE (§5.5), download-token administration (§5.10) and signed URLs (DESIGN §7).
extension V0API {
    /// How often a PATCH/DELETE is retried when the object changed between the rules check and the write.
    static let writeAttempts = 3

    func updateMetadata(_ call: V0Call, _ object: ObjectPath) async throws -> HTTPResponse {
        let backend = try backend(object.bucket)
        let patch = try MetadataJSON.decodePatch(try await collectJSONBody(call))
        let clientPreconditions = try queryPreconditions(call)
        for _ in 0..<Self.writeAttempts {
            let current = try await existingMetadata(call, backend, object)
            let proposed = current.map { patch.applied(to: $0, now: .now()) }
            try authorize(call, .update, bucket: object.bucket, path: object.name, principal: call.principal,
                          resource: current, requestResource: proposed)
            guard let current else { throw GatewayError.notFound() }
            try checkWritePreconditions(call, current, clientPreconditions)
            // Pin the generation the rules judged, so the patch applies to exactly that object.
            let pinned = Preconditions(ifGenerationMatch: current.generation,
                                       ifMetagenerationMatch: current.metageneration)
            do {
                let updated = try await storage(call) {
                    try await backend.updateMetadata(object, patch: patch, preconditions: pinned)
                }
                return Self.json(MetadataJSON.encode(updated), headers: [("ETag", Self.etag(updated))])
            } catch StorageError.preconditionFailed {
                continue
            } catch StorageError.notFound {
                throw GatewayError.notFound()
            }
        }
        throw GatewayError.unavailable("The object is being modified concurrently; retry.", retryAfter: 1)
    }

    func delete(_ call: V0Call, _ object: ObjectPath) async throws -> HTTPResponse {
        let backend = try backend(object.bucket)
        let clientPreconditions = try queryPreconditions(call)
        let signed = try signedGrant(call, object)
        for _ in 0..<Self.writeAttempts {
            let current = try await existingMetadata(call, backend, object)
            if !signed {
                try authorize(call, .delete, bucket: object.bucket, path: object.name, principal: call.principal,
                              resource: current)
            }
            guard let current else { throw GatewayError.notFound() }
            try checkWritePreconditions(call, current, clientPreconditions)
            do {
                try await storage(call) {
                    try await backend.delete(object, preconditions: Preconditions(ifGenerationMatch: current.generation))
                }
                return HTTPResponse(status: 204)
            } catch StorageError.preconditionFailed {
                continue
            } catch StorageError.notFound {
                throw GatewayError.notFound()
            }
        }
        throw GatewayError.unavailable("The object is being modified concurrently; retry.", retryAfter: 1)
    }

    /// `create_token=true` / `delete_token=T` (admin only). The last token is never removed without a
    /// replacement (§8).
    func manageToken(_ call: V0Call, _ object: ObjectPath, delete token: String?) async throws -> HTTPResponse {
        guard call.principal?.isAdmin == true else { throw GatewayError.forbidden("Missing admin credentials.") }
        call.context.decision = "admin"
        let backend = try backend(object.bucket)
        guard let current = try await existingMetadata(call, backend, object) else { throw GatewayError.notFound() }
        var patch = MetadataPatch()
        if let token {
            patch.removeDownloadTokens = [token]
            if current.downloadTokens.allSatisfy({ $0 == token }) { patch.addDownloadTokens = [SecureRandom.uuidString()] }
        } else {
            patch.addDownloadTokens = [SecureRandom.uuidString()]
        }
        do {
            let updated = try await storage(call) {
                try await backend.updateMetadata(object, patch: patch, preconditions: .none)
            }
            return Self.json(MetadataJSON.encode(updated), headers: [("ETag", Self.etag(updated))])
        } catch StorageError.notFound {
            throw GatewayError.notFound()
        }
    }

    static let maxSignedURLSeconds: Int64 = 7 * 24 * 3600

    /// `POST ?signedUrl` `{"method":"GET"|"DELETE","expiresIn":seconds}` → `{"url","expiresAt"}` (a body not
    /// declared as JSON is ignored: GET for an hour). The caller
    /// needs the permission the URL grants (rules `get` or `delete` on the object, judged now).
    func signURL(_ call: V0Call, _ object: ObjectPath) async throws -> HTTPResponse {
        let backend = try backend(object.bucket)
        let fields = Self.bodyIsJSON(call) ? try MetadataJSON.parseObject(try await collectJSONBody(call)) ?? [:] : [:]
        let method: String
        switch fields["method"] {
        case nil: method = "GET"
        case .string(let m)?: method = m.uppercased()
        default: throw GatewayError.badRequest("method must be a string.")
        }
        let accessMethod: AccessMethod
        switch method {
        case "GET", "HEAD": accessMethod = .get
        case "DELETE": accessMethod = .delete
        default: throw GatewayError.badRequest("method must be GET or DELETE.")
        }
        var expiresIn: Int64 = 3600
        if let value = fields["expiresIn"] {
            guard let seconds = value.int64Value, (1...Self.maxSignedURLSeconds).contains(seconds) else {
                throw GatewayError.badRequest("expiresIn must be an integer between 1 and \(Self.maxSignedURLSeconds).")
            }
            expiresIn = seconds
        }
        let current = try await existingMetadata(call, backend, object)
        try authorize(call, accessMethod, bucket: object.bucket, path: object.name, principal: call.principal,
                      resource: current)
        guard current != nil else { throw GatewayError.notFound() }
        let expiresAt = Timestamp.now().secondsSinceEpoch + expiresIn
        let grant = SignedURLGrant(method: method == "HEAD" ? "GET" : method, bucket: object.bucket,
                                   name: object.name, expiresAtSeconds: expiresAt)
        var url = objectURL(call, object) + "?"
        if grant.method == "GET" { url += "alt=media&" }
        url += "signature=" + grant.seal(signer)
        var out = Array(#"{"url":"#.utf8)
        JSONValue.encodeString(url, into: &out)
        out.append(contentsOf: #","expiresAt":"#.utf8)
        JSONValue.encodeString(Timestamp(nanosecondsSinceEpoch: expiresAt * 1_000_000_000).rfc3339Milliseconds,
                               into: &out)
        out.append(UInt8(ascii: "}"))
        return Self.json(out)
    }
}
