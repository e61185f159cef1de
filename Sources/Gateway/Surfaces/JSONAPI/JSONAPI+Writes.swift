import HTTPServer
import PortcullisCore
import Service

/// `objects.patch` (merge), `objects.update` (replace the writable fields) and `objects.delete`.
extension JSONAPI {
    /// PATCH: absent fields unchanged, `null` removes one, `metadata` merged per key (`null` removes a key, or
    /// all of them). `metadata.firebaseStorageDownloadTokens` is a key like any other here: a value replaces
    /// the token list, `null` removes it.
    func patch(_ call: JSONCall, _ object: ObjectPath) async throws -> HTTPResponse {
        let patch = try ObjectResourceJSON.decodePatch(try await collectJSONBody(call), tokens: .replace)
        let meta = try await service.updateMetadata(
            object, .merge(patch), conditions: try Self.conditions(call),
            caller: call.caller, call.context)
        return objectResponse(call, meta)
    }

    /// PUT: every writable field takes the body's value; absent ones are cleared (download tokens excepted,
    /// see `MetadataUpdate.replace`).
    func update(_ call: JSONCall, _ object: ObjectPath) async throws -> HTTPResponse {
        let fields = try ObjectResourceJSON.decodeUpload(try await collectJSONBody(call))
        let meta = try await service.updateMetadata(
            object, .replace(fields.attributes),
            conditions: try Self.conditions(call), caller: call.caller,
            call.context)
        return objectResponse(call, meta)
    }

    /// DELETE → 204 with an empty body.
    func delete(_ call: JSONCall, _ object: ObjectPath) async throws -> HTTPResponse {
        try await service.delete(object, conditions: try Self.conditions(call), caller: call.caller, call.context)
        return HTTPResponse(status: 204)
    }
}
