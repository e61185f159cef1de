import HTTPServer
import PortcullisCore
import Service

/// `objects.copy` (copyTo), `objects.rewrite` (rewriteTo, always done in one call), `objects.move` and
/// `objects.compose`.
extension JSONAPI {
    /// The body (optional; `null` counts as none) is an object resource whose fields replace the source's on the
    /// destination; `destinationStorageClass`, else the body's `storageClass`, sets the destination's storage
    /// class (default `STANDARD`).
    func copy(_ call: JSONCall, from source: ObjectPath, to destination: ObjectPath, rewrite: Bool) async throws
        -> HTTPResponse
    {
        // The body is optional, and GCS takes the JSON `null` as none.
        let body = try await collectJSONBody(call)
        let overrides =
            JSONObjectBody.isNull(body) ? MetadataPatch() : try ObjectResourceJSON.decodePatch(body, tokens: .replace)
        var request = try Self.copyRequest(call, from: source, to: destination, overrides: overrides)
        // The destination resource's `storageClass` is how google-cloud-storage's `update_storage_class` (a
        // rewrite onto itself) and Cloud Storage's own docs change a class; the query parameter wins when both come.
        let bodyClass = JSONObjectBody.isNull(body) ? nil : try JSONObjectBody.members(body)?["storageClass"]
        guard bodyClass == nil || bodyClass?.isNull == true || bodyClass?.stringValue != nil else {
            throw ServiceError.badRequest("storageClass must be a string.")
        }
        request.storageClass = try ObjectResourceJSON.storageClass(
            call.query["destinationStorageClass"] ?? bodyClass?.stringValue)
        let meta = try await service.copy(request, caller: call.caller, call.context)
        guard rewrite else { return objectResponse(call, meta) }
        return Self.json(JSONResources.rewrite(meta, base: baseURL(call), mask: call.fields))
    }

    /// `objects.move` (`…/o/{src}/moveTo/o/{dst}`, same bucket): the source's `ifSource…` conditions, the
    /// destination's preconditions; answers the destination's resource.
    func move(_ call: JSONCall, from source: ObjectPath, to destination: ObjectPath) async throws -> HTTPResponse {
        let request = try Self.copyRequest(call, from: source, to: destination, overrides: MetadataPatch())
        return objectResponse(call, try await service.move(request, caller: call.caller, call.context))
    }

    /// The source's conditions (`ifSource…`, `sourceGeneration`) and the destination's preconditions.
    static func copyRequest(
        _ call: JSONCall, from source: ObjectPath, to destination: ObjectPath, overrides: MetadataPatch
    ) throws(ServiceError) -> CopyRequest {
        var sourceConditions = Conditions(
            generation: Preconditions(
                ifGenerationMatch: try RequestConditions.integer(call.query, "ifSourceGenerationMatch"),
                ifMetagenerationMatch: try RequestConditions.integer(call.query, "ifSourceMetagenerationMatch"),
                ifGenerationNotMatch: try RequestConditions.integer(call.query, "ifSourceGenerationNotMatch"),
                ifMetagenerationNotMatch: try RequestConditions.integer(call.query, "ifSourceMetagenerationNotMatch")))
        sourceConditions.selectedGeneration = try RequestConditions.integer(call.query, "sourceGeneration")
        return CopyRequest(
            source: source, sourceConditions: sourceConditions, destination: destination,
            destinationPreconditions: try RequestConditions.generation(call.query), overrides: overrides)
    }

    /// `{"sourceObjects":[{"name","generation","objectPreconditions":{"ifGenerationMatch"}}],"destination":{…}}`.
    func compose(_ call: JSONCall, _ destination: ObjectPath) async throws -> HTTPResponse {
        let body = try JSONObjectBody.members(try await collectJSONBody(call)) ?? [:]
        guard let list = body["sourceObjects"]?.arrayValue, !list.isEmpty else {
            throw ServiceError.badRequest("Required field: sourceObjects.")
        }
        var sources: [ComposeRequest.Source] = []
        for entry in list {
            guard let name = entry["name"]?.stringValue, !name.isEmpty else {
                throw ServiceError.badRequest("Required field: sourceObjects[].name.")
            }
            var conditions = Conditions()
            conditions.selectedGeneration = try Self.integer(entry["generation"], "generation")
            conditions.generation.ifGenerationMatch = try Self.integer(
                entry["objectPreconditions"]?["ifGenerationMatch"], "objectPreconditions.ifGenerationMatch")
            sources.append(ComposeRequest.Source(name: name, conditions: conditions))
        }
        var attributes = ObjectAttributes()
        if let resource = body["destination"], !resource.isNull {
            attributes = try ObjectResourceJSON.decodeUpload(Array(resource.encoded().utf8)).attributes
        }
        let request = ComposeRequest(
            destination: destination, sources: sources, attributes: attributes,
            destinationPreconditions: try RequestConditions.generation(call.query))
        return objectResponse(call, try await service.compose(request, caller: call.caller, call.context))
    }

    /// A JSON integer the API may also send as a decimal string (`"generation": "123"`).
    static func integer(_ value: JSONValue?, _ name: String) throws(ServiceError) -> Int64? {
        switch value {
        case nil, .null?: return nil
        case .string(let text)?:
            guard let number = Int64(text), number >= 0 else { throw .badRequest("Invalid \(name): \(text).") }
            return number
        case let other?:
            guard let number = other.int64Value, number >= 0 else { throw .badRequest("Invalid \(name).") }
            return number
        }
    }
}
