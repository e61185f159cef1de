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
}
