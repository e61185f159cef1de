import Crypto
public import PortcullisCore
import Storage

/// One-shot uploads, metadata updates, deletes and download-token administration.
extension StorageService {
    /// How often a patch or delete is retried when the object changed between the rules check and the write.
    static let writeAttempts = 3

    /// Uploads `body` as the new generation of `request.object`: the early rules check before any byte is
    /// read, then the bytes, then the final check with the true size and hashes, then the preconditions.
    public func upload(_ request: UploadRequest, body: any ByteStream, caller: Caller, _ context: RequestContext)
        async throws(ServiceError) -> ObjectMetadata
    {
        let bucket: Bucket
        do throws(ServiceError) { bucket = try self.bucket(request.object.bucket, context) } catch {
            body.cancel()
            throw error
        }
        let object = request.object
        var attributes = Self.withDownloadToken(
            Self.ownTokens(request.attributes, for: caller.principal), request.mintDownloadToken)
        attributes.owner = Self.ownerEntity(caller.principal)
        var admitted = request
        admitted.attributes = attributes
        let existing: ObjectMetadata?
        do throws(ServiceError) {
            existing = try await self.existing(object, in: bucket, context)
            if try admit(admitted, principal: caller.principal, existing: existing, context) == .allowed,
                !request.preconditions.isSatisfied(by: existing)
            {
                throw ServiceError.preconditionFailed()
            }
        } catch {
            body.cancel()
            throw error
        }
        let limited = LimitedByteStream(body, limit: configuration.maxObjectBytes)
        let options = recordingChanges(
            commitOptions(
                object, principal: caller.principal, existing: existing,
                preconditions: request.preconditions,
                expectedMD5: request.expectedMD5, expectedCRC32C: request.expectedCRC32C, expectedSize: nil,
                context),
            in: bucket)
        let committed = try await storage(context, "storage.commit") { () async throws(StorageError) in
            try await bucket.backend.write(object, body: limited, attributes: attributes, options: options)
        }
        publishWrite(committed, replaced: existing, in: bucket)
        return revealed(committed, to: caller.principal)
    }

    /// Applies `update` to `object` after rules `update` judged the object as it would become, then the
    /// client's conditions. The write is pinned to the generation the rules judged. On a versioned bucket a
    /// request naming a generation updates that generation, live or noncurrent: the rules judge it as the
    /// `resource` (as a generation-addressed read does), and the write is pinned to its metageneration.
    public func updateMetadata(
        _ object: ObjectPath, _ update: MetadataUpdate, conditions: Conditions,
        caller: Caller, _ context: RequestContext
    ) async throws(ServiceError) -> ObjectMetadata {
        let bucket = try bucket(object.bucket, context)
        let update = Self.ownTokens(update, for: caller.principal)
        let addressed = conditions.selectedGeneration.flatMap { generation in
            bucket.versioned.map { (generation: generation, versioned: $0) }
        }
        for _ in 0..<Self.writeAttempts {
            let current = try await existing(object, in: bucket, context, generation: addressed?.generation)
            let patch = current.map { update.patch(against: $0) }
            let proposed = current.flatMap { current in patch.map { $0.applied(to: current, now: .now()) } }
            try authorize(
                .update, (object.bucket, object.name), principal: caller.principal, resource: current,
                requestResource: proposed, context)
            guard let current, let patch, let proposed else {
                throw .noSuchObject(bucket: object.bucket, name: object.name)
            }
            try conditions.checkWrite(current)
            try Self.checkCustomTime(from: current, to: proposed)
            do {
                let committed = try await storage(context, "storage.update") { () async throws(StorageError) in
                    if let addressed {
                        // A generation's own preconditions: `ifGenerationMatch` would name the live object.
                        try await commitGenerationPatch(
                            object, generation: addressed.generation, patch,
                            preconditions: Preconditions(ifMetagenerationMatch: current.metageneration),
                            addressed.versioned, in: bucket)
                    } else {
                        try await commitPatch(
                            object, patch,
                            preconditions: Preconditions(
                                ifGenerationMatch: current.generation,
                                ifMetagenerationMatch: current.metageneration),
                            in: bucket)
                    }
                }
                return revealed(committed, to: caller.principal)
            } catch  where error.kind == .preconditionFailed {
                continue
            }
        }
        throw .unavailable("The object is being modified concurrently; retry.", retryAfter: 1)
    }

    /// Cloud Storage's rule for `customTime`: once set it can only move forward, never back and never away
    /// (400 otherwise).
    static func checkCustomTime(from current: ObjectMetadata, to proposed: ObjectMetadata) throws(ServiceError) {
        guard let before = current.customTime else { return }
        guard let after = proposed.customTime else {
            throw .badRequest("customTime cannot be removed once set.")
        }
        guard after >= before else { throw .badRequest("customTime can only move forward.") }
    }

    /// Deletes `object`, by rules `delete` or a signed URL granting it.
    public func delete(_ object: ObjectPath, conditions: Conditions, caller: Caller, _ context: RequestContext)
        async throws(ServiceError)
    {
        let bucket = try bucket(object.bucket, context)
        let signed = try openSignature(caller, .delete, object, context)
        if let generation = conditions.selectedGeneration, let versioned = bucket.versioned {
            return try await deleteGeneration(
                object, generation, versioned, conditions: conditions, caller: caller, signed: signed, bucket,
                context)
        }
        for _ in 0..<Self.writeAttempts {
            let current = try await existing(object, in: bucket, context)
            if signed == nil {
                try authorize(
                    .delete, (object.bucket, object.name), principal: caller.principal, resource: current,
                    context)
            }
            guard let current else { throw .noSuchObject(bucket: object.bucket, name: object.name) }
            // A signed URL deletes only the generation it was issued for.
            if let signed, signed.generation != current.generation {
                throw .noSuchObject(bucket: object.bucket, name: object.name)
            }
            try conditions.checkWrite(current)
            do {
                try await storage(context, "storage.delete") { () async throws(StorageError) in
                    try await commitDelete(
                        object, current: current,
                        preconditions: Preconditions(ifGenerationMatch: current.generation), in: bucket)
                }
                return
            } catch  where error.kind == .preconditionFailed {
                continue
            }
        }
        throw .unavailable("The object is being modified concurrently; retry.", retryAfter: 1)
    }

    /// Adds a download token (`token == nil`) or removes one (admin only, README.md). The last token is never
    /// removed without a replacement.
    public func manageDownloadToken(
        _ object: ObjectPath, removing token: String?, caller: Caller,
        _ context: RequestContext
    ) async throws(ServiceError) -> ObjectMetadata {
        guard caller.isAdmin else { throw .forbidden("Missing admin credentials.") }
        context.record.decision = .admin
        let bucket = try bucket(object.bucket, context)
        guard let current = try await existing(object, in: bucket, context) else {
            throw .noSuchObject(bucket: object.bucket, name: object.name)
        }
        var patch = MetadataPatch()
        if let token {
            patch.removeDownloadTokens = [token]
            if current.downloadTokens.allSatisfy({ $0.bytesEqual(token) }) {
                patch.addDownloadTokens = [SecureRandom.uuidString()]
            }
        } else {
            patch.addDownloadTokens = [SecureRandom.uuidString()]
        }
        return try await storage(context, "storage.update") { () async throws(StorageError) in
            try await commitPatch(object, patch, preconditions: .none, in: bucket)
        }
    }

    /// Longest validity of a signed URL.
    public static let maxSignedURLSeconds: Int64 = 7 * 24 * 3600

    /// Seals a signed-URL grant for `method` on `object`, valid `seconds` from now. The caller needs the
    /// permission the URL grants (rules `get` or `delete` on the object, judged now).
    public func signURL(
        _ object: ObjectPath, method: SignedMethod, validFor seconds: Int64, caller: Caller,
        _ context: RequestContext
    ) async throws(ServiceError) -> SignedURL {
        guard (1...Self.maxSignedURLSeconds).contains(seconds) else {
            throw .badRequest("expiresIn must be an integer between 1 and \(Self.maxSignedURLSeconds).")
        }
        let bucket = try bucket(object.bucket, context)
        let current = try await existing(object, in: bucket, context)
        try authorize(
            method == .read ? .get : .delete, (object.bucket, object.name), principal: caller.principal,
            resource: current, context)
        guard let current else { throw .noSuchObject(bucket: object.bucket, name: object.name) }
        let expiresAt = Timestamp.now().secondsSinceEpoch + seconds
        let grant = SignedURLGrant(
            method: method, bucket: object.bucket, name: object.name, generation: current.generation,
            expiresAtSeconds: expiresAt)
        return SignedURL(
            signature: grant.seal(sealer),
            expiresAt: Timestamp(nanosecondsSinceEpoch: expiresAt * 1_000_000_000))
    }
}

/// A metadata change: GCS's PATCH (merge) or PUT (replace every writable field).
public enum MetadataUpdate: Sendable, Equatable {
    case merge(MetadataPatch)
    /// Absent fields are cleared and custom metadata is replaced; download tokens are kept unless the new
    /// attributes name some (they are capabilities, not descriptive metadata).
    case replace(ObjectAttributes)

    /// The patch that turns `current` into what this update asks for.
    func patch(against current: ObjectMetadata) -> MetadataPatch {
        switch self {
        case .merge(let patch):
            return patch
        case .replace(let a):
            var patch = MetadataPatch()
            func field(_ new: String?) -> FieldPatch<String> { new.map { .set($0) } ?? .remove }
            patch.contentType = field(a.contentType)
            patch.contentEncoding = field(a.contentEncoding)
            patch.contentDisposition = field(a.contentDisposition)
            patch.contentLanguage = field(a.contentLanguage)
            patch.cacheControl = field(a.cacheControl)
            patch.clearCustomMetadata = true
            patch.customMetadata = a.customMetadata.mapValues { Optional($0) }
            // `customTime` cannot be removed: a replacement without one keeps it.
            if let customTime = a.customTime { patch.customTime = .set(customTime) }
            if !a.downloadTokens.isEmpty {
                patch.removeDownloadTokens = current.downloadTokens.filter { !a.downloadTokens.containsBytes($0) }
                patch.addDownloadTokens = a.downloadTokens
            }
            return patch
        }
    }
}

/// A sealed signed-URL grant; the surface puts `signature` into its URL.
public struct SignedURL: Sendable, Equatable {
    public let signature: String
    public let expiresAt: Timestamp
}
