import HTTPServer
import PortcullisCore
import Storage

/// The resumable ("X-Goog-Upload") protocol of v0 §5.9, stateless: the upload URL carries a sealed
/// `UploadCapability` (bucket, object, starter identity, declared size and attributes, staging handle), so
/// chunk, query, cancel and finalize requests need no `Authorization` and may land on any instance.
extension V0API {
    /// Longest upload URL handed out: below the HTTP server's 8 KiB request line with room for the method.
    static let maxUploadURLBytes = 7 * 1024

    func resumableStart(_ call: V0Call, bucket: String, name objectName: String) async throws -> HTTPResponse {
        let backend = try backend(bucket)
        guard let staging = backend as? any ResumableStaging else {
            throw GatewayError(status: 501, message: "This bucket's storage does not support resumable uploads.")
        }
        let fields = Self.bodyIsJSON(call) ? try MetadataJSON.decodeUpload(try await collectJSONBody(call))
            : MetadataJSON.UploadFields()
        let object = try V0Router.objectPath(bucket, objectName)
        try checkDeclaredLength(call, allowance: Int64(configuration.maxJSONBodyBytes))
        let declaredSize = try Self.int64Header(call.headers, "X-Goog-Upload-Header-Content-Length",
                                                "X-Goog-Upload-Content-Length")
        let headerType = call.headers["X-Goog-Upload-Header-Content-Type"] ?? call.headers["X-Goog-Upload-Content-Type"]
        if let headerType { try MetadataJSON.checkHeaderSafe(headerType, "X-Goog-Upload-Header-Content-Type") }
        let attributes = completeAttributes(fields.attributes, contentType: headerType)
        let preconditions = try queryPreconditions(call)

        let existing = try await existingMetadata(call, backend, object)
        try precheckCreate(call, object, attributes, sizes: declaredSize.map { [$0] } ?? [], md5: fields.md5Hash,
                           existing: existing)
        if let existing, !preconditions.isSatisfied(by: existing) { throw GatewayError.preconditionFailed() }

        let handle = try await storage(call) {
            try await staging.startUpload(object, attributes: attributes, declaredSize: declaredSize)
        }
        let capability = UploadCapability(
            bucket: bucket, name: objectName, handle: handle, declaredSize: declaredSize, principal: call.principal,
            attributes: attributes, expectedMD5: fields.md5Hash, preconditions: preconditions,
            issuedAtMillis: Timestamp.now().millisecondsSinceEpoch)
        let url = baseURL(call) + "/v0/b/" + PercentDecoding.encodeComponent(bucket) + "/o?name="
            + PercentDecoding.encodeComponent(objectName) + "&upload_id=" + capability.seal(signer)
            + "&upload_protocol=resumable"
        // The URL carries the whole capability; it must fit the server's request-line limit (8 KiB).
        guard url.utf8.count <= Self.maxUploadURLBytes else {
            try? await staging.cancelUpload(handle, object: object)
            throw GatewayError.badRequest("The upload's metadata and credentials are too large for a resumable upload URL.")
        }
        var headers = HTTPHeaders()
        headers.add("X-Goog-Upload-Status", "active")
        headers.add("X-Goog-Upload-URL", url)
        headers.add("X-Goog-Upload-Chunk-Granularity", String(Self.chunkGranularity))
        headers.add("Content-Type", "text/plain; charset=utf-8")
        return HTTPResponse(status: 200, headers: headers, body: .empty)
    }

    func resumableContinue(_ call: V0Call, bucket: String, uploadID: String) async throws -> HTTPResponse {
        let capability: UploadCapability
        do {
            capability = try UploadCapability.open(signer, token: uploadID)
        } catch {
            // Edited, foreign or from a rotated-out key: to the client it is an unknown upload (§5.9: 404).
            throw GatewayError.notFound("Unknown upload_id.")
        }
        guard capability.bucket == bucket else { throw GatewayError.badRequest("The upload_id belongs to another bucket.") }
        let backend = try backend(bucket)
        guard let staging = backend as? any ResumableStaging else {
            throw GatewayError(status: 501, message: "This bucket's storage does not support resumable uploads.")
        }
        let object = try V0Router.objectPath(bucket, capability.name)
        call.context.objectName = capability.name
        call.context.decision = "token"
        if call.context.principalUID == nil { call.context.principalUID = capability.principal?.uid }

        let commands = Set((call.headers["X-Goog-Upload-Command"] ?? "").split(separator: ",")
            .map { $0.trimmingSpaces().lowercased() }.filter { !$0.isEmpty })
        guard !commands.isEmpty else { throw GatewayError.badRequest("Missing X-Goog-Upload-Command.") }
        let session = ResumableSession(api: self, call: call, staging: staging, backend: backend, object: object,
                                       capability: capability)
        if commands == ["query"] { return try await session.query() }
        if commands == ["cancel"] { return try await session.cancel() }
        guard commands.isSubset(of: ["upload", "finalize"]) else {
            throw GatewayError.badRequest("Unsupported X-Goog-Upload-Command.")
        }
        var size: Int64?
        if commands.contains("upload") {
            size = try await session.upload()
        }
        if commands.contains("finalize") { return try await session.finalize(stagedSize: size) }
        return session.status("active", size: size ?? 0)
    }
}

/// One request against an upload URL.
private struct ResumableSession {
    let api: V0API
    let call: V0Call
    let staging: any ResumableStaging
    let backend: any StorageBackend
    let object: ObjectPath
    let capability: UploadCapability

    func status(_ status: String, size: Int64?, body: [UInt8]? = nil) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("X-Goog-Upload-Status", status)
        if let size { headers.add("X-Goog-Upload-Size-Received", String(size)) }
        if let body {
            headers.add("Content-Type", "application/json; charset=utf-8")
            return HTTPResponse(status: 200, headers: headers, body: .bytes(body))
        }
        return HTTPResponse(status: 200, headers: headers)
    }

    /// Where the upload stands. Backends that forget finished uploads (the protocol's default `uploadState`)
    /// answer `.notFound` once the staging area is gone; then an object created since the upload started, of
    /// the declared size, is taken as its result (statelessness: there is no session table to ask).
    func state() async throws -> UploadState? {
        do {
            return try await api.storage(call) { try await staging.uploadState(capability.handle, object: object) }
        } catch StorageError.notFound {
            guard let meta = try await api.existingMetadata(call, backend, object),
                  meta.timeCreated.millisecondsSinceEpoch >= capability.issuedAtMillis,
                  capability.declaredSize == nil || meta.size == capability.declaredSize else { return nil }
            return .finalized(size: meta.size, generation: meta.generation)
        }
    }

    static let unknownUpload = GatewayError.notFound("Unknown or expired upload.")

    /// The error for a chunk or finalize sent to an upload that no longer accepts them (§5.9: 400).
    func inactive() async throws -> GatewayError {
        switch try await state() {
        case .finalized?:
            return GatewayError.badRequest("The upload was already finalized.").withUploadStatus("final")
        case .cancelled?:
            return GatewayError.badRequest("The upload was cancelled.").withUploadStatus("cancelled")
        case .active(let size)?:
            return GatewayError(StorageError.offsetMismatch(current: size)).withUploadStatus("active")
        case nil:
            return Self.unknownUpload
        }
    }

    func query() async throws -> HTTPResponse {
        switch try await state() {
        case .active(let size)?: return status("active", size: size)
        case .finalized(let size, _)?: return status("final", size: size)
        case .cancelled?: return status("cancelled", size: 0)
        case nil: throw Self.unknownUpload
        }
    }

    func cancel() async throws -> HTTPResponse {
        switch try await state() {
        case .active?:
            try await api.storage(call) { try await staging.cancelUpload(capability.handle, object: object) }
            return status("cancelled", size: nil)
        case .cancelled?:
            return status("cancelled", size: nil)
        case .finalized?:
            throw GatewayError.badRequest("The upload was already finalized.").withUploadStatus("final")
        case nil:
            throw Self.unknownUpload
        }
    }

    /// Appends the body at `X-Goog-Upload-Offset`. A wrong offset stores nothing and is answered with the
    /// persisted size (400, status still `active`, so clients query and resume).
    func upload() async throws -> Int64 {
        guard let offset = try V0API.int64Header(call.headers, "X-Goog-Upload-Offset") else {
            throw GatewayError.badRequest("Missing X-Goog-Upload-Offset.").withUploadStatus("active")
        }
        let ceiling = capability.declaredSize ?? api.configuration.maxObjectBytes
        let room = ceiling - offset
        if let length = call.request.body.expectedLength, length > max(0, room) {
            guard case .active(let current)? = try await state() else { throw try await inactive() }
            // A wrong offset is reported as such (with the persisted size, so the client resumes from it), even
            // when the misplaced chunk would also overrun the declared size.
            if offset != current {
                throw GatewayError(StorageError.offsetMismatch(current: current)).withUploadStatus("active")
            }
            if capability.declaredSize != nil {
                throw GatewayError.badRequest("The chunk goes beyond the declared upload size of \(ceiling) bytes.")
                    .withUploadStatus("active")
            }
            throw GatewayError.payloadTooLarge(limit: api.configuration.maxObjectBytes)
        }
        let body = LimitedByteStream(call.request.body, limit: max(0, room))
        do {
            return try await api.storage(call) {
                try await staging.appendChunk(capability.handle, object: object, offset: offset, body: body)
            }
        } catch StorageError.offsetMismatch(let current) {
            throw GatewayError(StorageError.offsetMismatch(current: current)).withUploadStatus("active")
        } catch StorageError.notFound {
            throw try await inactive()
        } catch StorageError.invalidArgument {
            throw try await inactive()
        } catch StorageError.sizeMismatch {
            throw GatewayError.badRequest("The chunk goes beyond the declared upload size of \(ceiling) bytes.")
                .withUploadStatus("active")
        } catch StorageError.bodyFailed(let underlying) {
            if case .limitExceeded? = underlying as? ByteStreamError, capability.declaredSize != nil {
                throw GatewayError.badRequest("The chunk goes beyond the declared upload size of \(ceiling) bytes.")
                    .withUploadStatus("active")
            }
            throw GatewayError(bodyError: underlying).withUploadStatus("active")
        }
    }

    /// Commits the staged bytes: size and MD5 checked, rules `create` judged for the starter's identity.
    /// A repeated finalize replays the object's metadata.
    func finalize(stagedSize known: Int64?) async throws -> HTTPResponse {
        let size: Int64
        if let known {
            size = known
        } else {
            switch try await state() {
            case .active(let staged)?:
                size = staged
            case .finalized(_, let generation)?:
                // A repeated finalize replays the result, as long as the object is still that generation.
                if let meta = try await api.existingMetadata(call, backend, object), meta.generation == generation {
                    return status("final", size: meta.size, body: MetadataJSON.encode(meta))
                }
                throw GatewayError.badRequest("The upload was already finalized.").withUploadStatus("final")
            case .cancelled?:
                throw GatewayError.badRequest("The upload was cancelled.").withUploadStatus("cancelled")
            case nil:
                throw Self.unknownUpload
            }
        }
        if let declared = capability.declaredSize, size != declared {
            throw GatewayError(StorageError.sizeMismatch(expected: declared, actual: size)).withUploadStatus("active")
        }
        let existing = try await api.existingMetadata(call, backend, object)
        let options = api.createOptions(call, object, principal: capability.principal, existing: existing,
                                        preconditions: capability.preconditions,
                                        expectedMD5: capability.expectedMD5, expectedSize: capability.declaredSize)
        do {
            let meta = try await api.storage(call) {
                try await staging.finalizeUpload(capability.handle, object: object, attributes: capability.attributes,
                                                 options: options)
            }
            return status("final", size: meta.size, body: MetadataJSON.encode(meta))
        } catch let error as StorageError {
            switch error {
            case .sizeMismatch, .offsetMismatch, .unavailable, .timedOut:
                throw GatewayError(error).withUploadStatus("active")
            case .notFound, .invalidArgument:
                throw try await inactive()
            default:
                // Rules denial, checksum mismatch, failed precondition: this upload can never succeed.
                try? await staging.cancelUpload(capability.handle, object: object)
                throw GatewayError(error).withUploadStatus("final")
            }
        }
    }
}
