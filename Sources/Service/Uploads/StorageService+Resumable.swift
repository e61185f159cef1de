public import PortcullisCore
public import Storage

/// Resumable uploads, stateless: the upload id is a sealed `UploadTicket` (target, starter identity, declared
/// size and attributes, staging handle), so chunk, query, cancel and finalize requests need no
/// `Authorization` and may land on any instance. Surfaces map their protocol (v0's `X-Goog-Upload-*`
/// commands, the JSON API's `Content-Range` chunks) onto `startResumable` and the `ResumableUpload` it opens.
extension StorageService {
    /// Starts a resumable upload after the early rules check; returns the sealed upload id.
    public func startResumable(
        _ request: UploadRequest, declaredSize: Int64?, caller: Caller,
        _ context: RequestContext
    ) async throws(ServiceError) -> String {
        let bucket = try bucket(request.object.bucket, context)
        guard let staging = bucket.staging else {
            throw ServiceError(.notImplemented, "This bucket's storage does not support resumable uploads.")
        }
        if let declaredSize, declaredSize > configuration.maxObjectBytes {
            throw .payloadTooLarge(limit: configuration.maxObjectBytes)
        }
        let object = request.object
        var admitted = request
        admitted.attributes = Self.ownTokens(request.attributes, for: caller.principal)
        admitted.attributes.owner = Self.ownerEntity(caller.principal)
        admitted.possibleSizes = declaredSize.map { [$0] } ?? []
        let existing = try await existing(object, in: bucket, context)
        if try admit(admitted, principal: caller.principal, existing: existing, context) == .allowed,
            !request.preconditions.isSatisfied(by: existing)
        {
            throw .preconditionFailed()
        }
        // The start is accepted: the rules allowed it with what is known (the chunks' commit decides again).
        if context.record.decision == nil { context.record.decision = .allow }
        let issued = Timestamp.now()
        let derives = request.mintDownloadToken && admitted.attributes.downloadTokens.isEmpty
        var staged = admitted.attributes
        if derives {
            staged.downloadTokens = [
                sealer.derivedDownloadToken(
                    UploadTicket.downloadTokenSeed(
                        bucket: object.bucket, name: object.name,
                        issuedAtMillis: issued.millisecondsSinceEpoch), keyOf: nil)
            ]
        }
        let handle = try await storage(context, "storage.stage") { () async throws(StorageError) in
            try await staging.startUpload(object, attributes: staged, declaredSize: declaredSize)
        }
        let ticket = UploadTicket(
            bucket: object.bucket, name: object.name, handle: handle, declaredSize: declaredSize,
            principal: caller.principal, attributes: admitted.attributes, expectedMD5: request.expectedMD5,
            expectedCRC32C: request.expectedCRC32C,
            preconditions: request.preconditions, issuedAtMillis: issued.millisecondsSinceEpoch,
            expiresAtSeconds: issued.secondsSinceEpoch + UploadTicket.lifetimeSeconds, derivesDownloadToken: derives)
        return ticket.seal(sealer)
    }

    /// Opens the upload `uploadID` names in `bucket`. An edited, foreign, expired or rotated-out id is an
    /// unknown upload (404), as is one for another bucket.
    public func resumableUpload(_ uploadID: String, bucket name: String, _ context: RequestContext)
        throws(ServiceError) -> ResumableUpload
    {
        let ticket: UploadTicket
        do {
            ticket = try UploadTicket.open(sealer, token: uploadID, bucket: name, now: .now())
        } catch .mismatch {
            throw .badRequest("The upload_id belongs to another bucket.")
        } catch {
            throw .notFound("Unknown upload_id.")
        }
        let bucket = try bucket(name, context)
        guard let staging = bucket.staging else {
            throw ServiceError(.notImplemented, "This bucket's storage does not support resumable uploads.")
        }
        let object = try Self.objectPath(ticket.bucket, ticket.name)
        context.record.objectName = ticket.name
        context.record.decision = .token
        if context.record.principalUID == nil { context.record.principalUID = ticket.principal?.uid }
        return ResumableUpload(
            service: self, bucket: bucket, staging: staging, object: object, ticket: ticket,
            uploadID: uploadID, context: context)
    }
}

/// One request against an open resumable upload. A chunk's result is an `AppendOutcome`; every failure of
/// `append`, `cancel` and `finalize` is a `ResumableFailure` saying where the upload stands, so each surface can
/// tell its clients, in its own words, whether they may resume.
public struct ResumableUpload: Sendable {
    let service: StorageService
    let bucket: StorageService.Bucket
    let staging: any ResumableStaging
    public let object: ObjectPath
    let ticket: UploadTicket
    let uploadID: String
    let context: RequestContext

    /// The size the client declared at the start, if any.
    public var declaredSize: Int64? { ticket.declaredSize }

    /// The answer for an upload id whose staging record is gone: the session is over, nothing else is said.
    static let unknownUpload = ServiceError.notFound("Unknown or expired upload.")

    /// Where the upload stands, from the staging record the upload id names. Nil: the record is gone (swept
    /// after `--upload-idle-timeout`, removed by a bucket lifecycle rule, or never existed). The answer is
    /// never looked up by the object's name: whatever is stored under that name later is somebody else's
    /// object, not this upload's result.
    public func state() async throws(ServiceError) -> UploadState? {
        do {
            return try await service.storage(context, "storage.lookup") { () async throws(StorageError) in
                try await staging.uploadState(ticket.handle, object: object)
            }
        } catch  where error.kind == .notFound {
            return nil
        }
    }

    /// The object a finalized upload committed, while it is still that generation, as the upload's starter
    /// may see it (download tokens only if the starter may read it).
    public func committedObject(generation: Int64) async throws(ServiceError) -> ObjectMetadata? {
        guard let meta = try await service.existing(object, in: bucket, context), meta.generation == generation else {
            return nil
        }
        return service.revealed(meta, to: ticket.principal)
    }

    /// The failure for a chunk or finalize sent to an upload that no longer accepts them (or, when the staging
    /// is still active, one that disagreed with what it holds).
    func inactive() async throws(ServiceError) -> ResumableFailure {
        switch try await state() {
        case .finalized?:
            return ResumableFailure(.badRequest("The upload was already finalized."), standing: .finished)
        case .cancelled?:
            return ResumableFailure(.badRequest("The upload was cancelled."), standing: .cancelled)
        case .active(let size)?:
            return Self.mismatch(persisted: size)
        case nil:
            return ResumableFailure(Self.unknownUpload, standing: nil)
        }
    }

    /// A request that disagreed with the `persisted` bytes the upload holds; it may resume from there.
    static func mismatch(persisted: Int64) -> ResumableFailure {
        ResumableFailure(
            ServiceError(StorageError.offsetMismatch(current: persisted)), standing: .open, persisted: persisted)
    }

    /// Discards the staged bytes; cancelling a cancelled upload is a no-op, a finalized one a failure.
    public func cancel() async throws(ResumableFailure) {
        do {
            switch try await state() {
            case .active?:
                try await service.storage(context, "storage.cancel") { () async throws(StorageError) in
                    try await staging.cancelUpload(ticket.handle, object: object)
                }
            case .cancelled?:
                return
            case .finalized?:
                throw ResumableFailure(.badRequest("The upload was already finalized."), standing: .finished)
            case nil:
                throw ResumableFailure(Self.unknownUpload, standing: nil)
            }
        } catch {
            throw ResumableFailure(caught: error)
        }
    }

    /// Appends `body` at `offset`. A wrong offset stores nothing and is the `.offsetMismatch` outcome with the
    /// persisted size (the upload stays open, so the client resumes from it).
    public func append(at offset: Int64, body: any ByteStream) async throws(ResumableFailure) -> AppendOutcome {
        do {
            return try await appendChunk(at: offset, body: body)
        } catch {
            throw ResumableFailure(caught: error)
        }
    }

    private func appendChunk(at offset: Int64, body: any ByteStream) async throws -> AppendOutcome {
        let maxObjectBytes = service.configuration.maxObjectBytes
        let ceiling = ticket.declaredSize ?? maxObjectBytes
        let room = ceiling - offset
        let beyondDeclared = ResumableFailure(
            .badRequest("The chunk goes beyond the declared upload size of \(ceiling) bytes."), standing: .open)
        if let length = body.expectedLength, length > max(0, room) {
            body.cancel()
            guard case .active(let current)? = try await state() else { throw try await inactive() }
            // A wrong offset is reported as such (with the persisted size, so the client resumes from it), even
            // when the misplaced chunk would also overrun the declared size.
            if offset != current { return .offsetMismatch(persisted: current) }
            if ticket.declaredSize != nil { throw beyondDeclared }
            throw ServiceError.payloadTooLarge(limit: maxObjectBytes)
        }
        let limited = LimitedByteStream(body, limit: max(0, room))
        let start = MonotonicClock.nanoseconds()
        let span = context.trace?.startSpan("storage.stage")
        defer {
            context.record.addUpstreamTime(nanos: MonotonicClock.nanoseconds() &- start)
            span?.end()
        }
        do {
            return .stored(try await staging.appendChunk(ticket.handle, object: object, offset: offset, body: limited))
        } catch {
            switch error {
            case .offsetMismatch(let current):
                return .offsetMismatch(persisted: current)
            case .notFound, .invalidArgument:
                let failure = try await inactive()
                if failure.standing == .open, let persisted = failure.persisted {
                    return .offsetMismatch(persisted: persisted)
                }
                throw failure
            case .sizeMismatch:
                throw beyondDeclared
            case .bodyFailed(let underlying):
                if case .limitExceeded? = underlying as? ByteStreamError, ticket.declaredSize != nil {
                    throw beyondDeclared
                }
                throw ResumableFailure(ServiceError(bodyError: underlying), standing: .open)
            default:
                throw ResumableFailure(ServiceError(error), standing: .open)
            }
        }
    }

    /// Commits the staged bytes: size and declared digests checked, rules `create` judged for the starter's
    /// identity, then the preconditions. A repeated finalize replays the object's metadata. `stagedSize` is
    /// what the caller already knows was staged (nil: ask the backend). `md5`/`crc32c` are digests the final
    /// request declares (Cloud Storage takes them on the last chunk); those declared at the start win.
    public func finalize(stagedSize known: Int64?, md5: String? = nil, crc32c: String? = nil)
        async throws(ResumableFailure) -> ObjectMetadata
    {
        do {
            return try await commit(
                stagedSize: known, md5: ticket.expectedMD5 ?? md5, crc32c: ticket.expectedCRC32C ?? crc32c)
        } catch {
            throw ResumableFailure(caught: error)
        }
    }

    private func commit(stagedSize known: Int64?, md5: String?, crc32c: String?) async throws -> ObjectMetadata {
        let size: Int64
        if let known {
            size = known
        } else {
            switch try await state() {
            case .active(let staged)?:
                size = staged
            case .finalized(_, let generation)?:
                if let meta = try await committedObject(generation: generation) { return meta }
                throw ResumableFailure(.badRequest("The upload was already finalized."), standing: .finished)
            case .cancelled?:
                throw ResumableFailure(.badRequest("The upload was cancelled."), standing: .cancelled)
            case nil:
                throw ResumableFailure(Self.unknownUpload, standing: nil)
            }
        }
        if let declared = ticket.declaredSize, size != declared {
            throw ResumableFailure(
                ServiceError(StorageError.sizeMismatch(expected: declared, actual: size)), standing: .open)
        }
        let existing = try await service.existing(object, in: bucket, context)
        let options = service.recordingChanges(
            service.commitOptions(
                object, principal: ticket.principal, existing: existing,
                preconditions: ticket.preconditions, expectedMD5: md5, expectedCRC32C: crc32c,
                expectedSize: ticket.declaredSize, context),
            in: bucket)
        var attributes = ticket.attributes
        attributes.owner = StorageService.ownerEntity(ticket.principal)
        if ticket.derivesDownloadToken {
            attributes.downloadTokens = [service.sealer.derivedDownloadToken(ticket.downloadTokenSeed, keyOf: uploadID)]
        }
        let start = MonotonicClock.nanoseconds()
        let span = context.trace?.startSpan("storage.commit")
        defer {
            context.record.addUpstreamTime(nanos: MonotonicClock.nanoseconds() &- start)
            span?.end()
        }
        do {
            let committed = try await staging.finalizeUpload(
                ticket.handle, object: object, attributes: attributes,
                options: options)
            service.publishWrite(committed, replaced: existing, in: bucket)
            return service.revealed(committed, to: ticket.principal)
        } catch {
            switch error {
            case .offsetMismatch(let current):
                throw Self.mismatch(persisted: current)
            case .sizeMismatch, .unavailable, .timedOut:
                throw ResumableFailure(ServiceError(error), standing: .open)
            case .notFound, .invalidArgument:
                throw try await inactive()
            default:
                // Rules denial, checksum mismatch, failed precondition: this upload can never succeed.
                try? await staging.cancelUpload(ticket.handle, object: object)
                throw ResumableFailure(ServiceError(error), standing: .finished)
            }
        }
    }
}

extension ResumableFailure {
    /// Any error of a resumable request: a `ResumableFailure` as it is; anything else says nothing about where
    /// the upload stands.
    init(caught error: any Error) {
        if let failure = error as? ResumableFailure {
            self = failure
        } else {
            self.init(ServiceError(any: error), standing: nil)
        }
    }
}
