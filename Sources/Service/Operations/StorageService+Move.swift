public import PortcullisCore
import Storage

/// `objects.move` within one bucket: the rules must allow reading **and** deleting the source and creating the
/// destination (judged with the source's attributes, size and hashes under the new name). On a backend that
/// renames atomically (`AtomicRenames`, the embedded one) it is one commit. Elsewhere it is a server-side copy
/// followed by a delete of exactly the generation copied, so the destination is committed (and announced) as any
/// copy is and the source's delete is guarded: if the source changed meanwhile, the new destination is removed
/// again and the call fails with 412, leaving the source as it was.
extension StorageService {
    /// Moves `request.source` to `request.destination` (same bucket), returning the destination's metadata.
    public func move(_ request: CopyRequest, caller: Caller, _ context: RequestContext) async throws(ServiceError)
        -> ObjectMetadata
    {
        guard request.source.bucket.bytesEqual(request.destination.bucket) else {
            throw .badRequest("A move stays within one bucket.")
        }
        let bucket = try bucket(request.source.bucket, context)
        if request.source.name.bytesEqual(request.destination.name) {
            return try await moveOntoItself(request, bucket, caller, context)
        }
        // Delete on the source is judged before anything is written (the copy judges the read and the create).
        let source = try await existing(request.source, in: bucket, context)
        try authorize(
            .delete, (request.source.bucket, request.source.name), principal: caller.principal, resource: source,
            context)
        guard let source else { throw .noSuchObject(bucket: request.source.bucket, name: request.source.name) }
        if let renames = bucket.renames {
            return try await renameAtomically(request, source, renames, bucket, caller, context)
        }
        // The copy must read the very generation judged for delete.
        var pinned = request
        if pinned.sourceConditions.generation.ifGenerationMatch == nil {
            pinned.sourceConditions.generation.ifGenerationMatch = source.generation
        }
        // A moved object keeps its storage class.
        pinned.storageClass = source.storageClass
        let moved = try await copy(pinned, caller: caller, context)
        do {
            try await storage(context, "storage.delete") { () async throws(StorageError) in
                try await commitDelete(
                    request.source, current: source,
                    preconditions: Preconditions(ifGenerationMatch: source.generation), in: bucket)
            }
        } catch {
            // The source changed after it was copied: undo the destination (only the generation written here).
            try? await storage(context, "storage.delete") { () async throws(StorageError) in
                try await commitDelete(
                    request.destination, current: moved,
                    preconditions: Preconditions(ifGenerationMatch: moved.generation), in: bucket)
            }
            if error.kind == .preconditionFailed || error.kind == .notFound {
                throw .preconditionFailed("The source object changed during the move; nothing was moved.")
            }
            throw error
        }
        return moved
    }

    /// A move of an object onto its own name changes nothing: judged as any move (read and delete of the
    /// source, its conditions, the destination's preconditions), answered with the object as it is.
    private func moveOntoItself(
        _ request: CopyRequest, _ bucket: Bucket, _ caller: Caller, _ context: RequestContext
    ) async throws(ServiceError) -> ObjectMetadata {
        let current = try await existing(request.source, in: bucket, context)
        try authorize(
            .delete, (request.source.bucket, request.source.name), principal: caller.principal, resource: current,
            context)
        _ = try authorizeRead(request.source, caller: Caller(principal: caller.principal), current: current, context)
        guard let current else { throw .noSuchObject(bucket: request.source.bucket, name: request.source.name) }
        try request.sourceConditions.checkWrite(current)
        guard request.destinationPreconditions.isSatisfied(by: current) else { throw .preconditionFailed() }
        return current
    }

    /// The move as one commit: the source judged for read and its conditions, the destination for `create` with
    /// the object it would become, then the rename of exactly the judged generation.
    private func renameAtomically(
        _ request: CopyRequest, _ current: ObjectMetadata, _ renames: any AtomicRenames, _ bucket: Bucket,
        _ caller: Caller, _ context: RequestContext
    ) async throws(ServiceError) -> ObjectMetadata {
        let source = try await judgeSource(request.source, request.sourceConditions, bucket, caller, context)
        guard source.generation == current.generation else {
            throw .preconditionFailed("The source object changed during the move; nothing was moved.")
        }
        let replaced = try await existing(request.destination, in: bucket, context)
        var attributes = Self.attributes(of: source)
        attributes.storageClass = source.storageClass
        let proposal = Self.proposal(
            request.destination, attributes, size: source.size, md5: source.md5Hash, crc32c: source.crc32c,
            existing: replaced)
        try authorize(
            .create, (request.destination.bucket, request.destination.name), principal: caller.principal,
            resource: replaced, requestResource: proposal, context)
        return try await storage(context, "storage.commit") { () async throws(StorageError) in
            try await commitRename(
                request.source, current: source, to: request.destination, replacing: replaced,
                preconditions: request.destinationPreconditions, with: renames, in: bucket)
        }
    }
}
