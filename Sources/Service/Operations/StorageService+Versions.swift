public import PortcullisCore
import Rules
import Storage

/// Generation-addressed operations on a versioned backend (Cloud Storage's object versioning) that differ
/// from their live-object forms; reads and copy sources only pass the generation down (`Bucket.read`).
extension StorageService {
    /// Deletes `object` at `generation` for good, live or noncurrent. The rules judge `delete` on the object's
    /// path with `resource` = that generation (as for a generation-addressed read); a signed URL deletes only
    /// the generation it was issued for. Its change event is `deleted`, live or noncurrent.
    func deleteGeneration(
        _ object: ObjectPath, _ generation: Int64, _ versioned: any VersionedStorage, conditions: Conditions,
        caller: Caller, signed: SignedURLGrant?, _ bucket: Bucket, _ context: RequestContext
    ) async throws(ServiceError) {
        let current = try await existing(object, in: bucket, context, generation: generation)
        if signed == nil {
            try authorize(
                .delete, (object.bucket, object.name), principal: caller.principal, resource: current, context)
        }
        guard let current else { throw .noSuchObject(bucket: object.bucket, name: object.name) }
        if let signed, signed.generation != current.generation {
            throw .noSuchObject(bucket: object.bucket, name: object.name)
        }
        try conditions.checkWrite(current)
        try await storage(context, "storage.delete") { () async throws(StorageError) in
            try await commitGenerationDelete(object, current: current, versioned, in: bucket)
        }
    }

    /// Updates the metadata of `object` at `generation`, live or noncurrent. The rules judge `update` on the
    /// object's path with `resource` = that generation and `request.resource` = it as it would become (as for a
    /// generation-addressed read or delete); the write is pinned to the metageneration they judged.
    func updateGeneration(
        _ object: ObjectPath, _ generation: Int64, _ versioned: any VersionedStorage, _ update: MetadataUpdate,
        conditions: Conditions, caller: Caller, _ bucket: Bucket, _ context: RequestContext
    ) async throws(ServiceError) -> ObjectMetadata {
        for _ in 0..<Self.writeAttempts {
            let current = try await existing(object, in: bucket, context, generation: generation)
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
            let pinned = Preconditions(ifMetagenerationMatch: current.metageneration)
            do {
                let committed = try await storage(context, "storage.update") { () async throws(StorageError) in
                    try await commitGenerationPatch(
                        object, generation: generation, patch, preconditions: pinned, versioned, in: bucket)
                }
                return revealed(committed, to: caller.principal)
            } catch  where error.kind == .preconditionFailed {
                continue
            }
        }
        throw .unavailable("The object is being modified concurrently; retry.", retryAfter: 1)
    }
}
