import Crypto
import Gzip
public import PortcullisCore
public import Storage

/// Reads: metadata, bytes (whole, ranged, conditional), and the Firebase download URL's token.
extension StorageService {
    /// Metadata of `object`, or a 304 answer when the client's copy is current.
    ///
    /// `ensureDownloadToken` is the v0 behaviour: an object read without any download token gets its first one
    /// (bumping its metageneration), so its download URL can be handed out. Never under a signed URL, and a
    /// signed-URL caller sees no tokens at all.
    public func metadata(
        of object: ObjectPath, caller: Caller, conditions: Conditions, ensureDownloadToken: Bool,
        _ context: RequestContext
    ) async throws(ServiceError) -> MetadataOutcome {
        let bucket = try bucket(object.bucket, context)
        let (meta, grant) = try await readAccess(object, bucket, caller, ensureDownloadToken, context)
        let visible = Self.visible(meta, to: grant)
        guard try conditions.checkRead(meta) else { return .notModified(visible) }
        return .current(visible)
    }

    /// Opens `object` for reading: access, conditions, range, then the bytes (none with `headOnly`).
    public func read(_ object: ObjectPath, caller: Caller, options: ReadOptions, _ context: RequestContext)
        async throws(ServiceError) -> ReadOutcome
    {
        let bucket = try bucket(object.bucket, context)
        if bucket.readsAreLocal, !options.headOnly, options.range == nil,
            let outcome = try await readWholeLocally(object, bucket, caller, options, context)
        {
            return outcome
        }
        let (meta, grant) = try await readAccess(object, bucket, caller, options.ensureDownloadToken, context)
        guard try options.conditions.checkRead(meta) else { return .notModified(Self.visible(meta, to: grant)) }
        let decompress = Self.decompresses(meta, options)

        // One satisfiable `bytes` range → partial content; an `If-Range` that does not match → the whole object.
        // A decompressed body has no stable byte offsets: its range is ignored (served whole, as GCS does).
        var spec = decompress ? nil : options.range.flatMap { $0.applies(to: meta) ? $0.spec : nil }
        if let requested = spec, requested.resolve(size: meta.size) == nil {
            // `bytes=0-N` on an empty object is served whole (the JS SDK treats 416 as an error).
            if meta.size == 0, case .fromTo(first: 0, _) = requested {
                spec = nil
            } else {
                throw ServiceError(StorageError.rangeNotSatisfiable(size: meta.size))
            }
        }
        if options.headOnly {
            return .content(
                ObjectContent(
                    metadata: Self.visible(meta, to: grant),
                    range: spec?.resolve(size: meta.size), body: nil, decompressed: decompress))
        }
        let read = try await storage(context, "storage.read") { () async throws(StorageError) in
            try await bucket.read(object, range: spec, context.inPlacePermit)
        }
        return .content(Self.content(read, visible: Self.visible(read.metadata, to: grant), options))
    }

    /// Decompressive transcoding (as Cloud Storage does it): an object stored with `Content-Encoding: gzip` is
    /// served decompressed to a client that does not accept gzip, unless its `Cache-Control` says
    /// `no-transform`.
    static func decompresses(_ meta: ObjectMetadata, _ options: ReadOptions) -> Bool {
        guard !options.acceptsGzip, let encoding = meta.contentEncoding else { return false }
        let lowered = encoding.lowercased()
        guard lowered == "gzip" || lowered == "x-gzip" else { return false }
        return !(meta.cacheControl?.lowercased().contains("no-transform") ?? false)
    }

    /// What a read serves: the bytes as opened, or gunzipped as they stream when transcoding applies.
    static func content(_ read: ObjectRead, visible: ObjectMetadata, _ options: ReadOptions) -> ObjectContent {
        guard read.range == nil, decompresses(read.metadata, options) else {
            return ObjectContent(metadata: visible, range: read.range, body: read.body)
        }
        return ObjectContent(
            metadata: visible, range: nil, body: .stream(GunzipStream(read.body.byteStream())),
            decompressed: true)
    }

    /// The whole-object read on a local backend with ONE index lookup instead of two: the read (index row and
    /// blob open together) comes first, and the access check then judges exactly the metadata whose bytes
    /// would be served. Nothing is revealed before the check passes: a denied caller gets the same 403 whether
    /// or not the object exists, and the opened region is dropped unsent. Returns nil — use the general path —
    /// for an object that would get its first download token.
    private func readWholeLocally(
        _ object: ObjectPath, _ bucket: Bucket, _ caller: Caller, _ options: ReadOptions,
        _ context: RequestContext
    ) async throws(ServiceError) -> ReadOutcome? {
        let read: ObjectRead?
        let start = MonotonicClock.nanoseconds()
        do {
            read = try await bucket.read(object, range: nil, context.inPlacePermit)
        } catch .notFound {
            read = nil
        } catch {
            throw ServiceError(error)
        }
        context.record.addUpstreamTime(nanos: MonotonicClock.nanoseconds() &- start)
        if let read, options.ensureDownloadToken, read.metadata.downloadTokens.isEmpty {
            // Checked before the access decision, so that the general path decides (and counts) it once.
            read.body.discard()
            return nil
        }
        let grant: ReadGrant
        do {
            grant = try authorizeRead(object, caller: caller, current: read?.metadata, context)
        } catch {
            read?.body.discard()
            throw error
        }
        guard let read else { throw .noSuchObject(bucket: object.bucket, name: object.name) }
        let visible = Self.visible(read.metadata, to: grant)
        let proceed: Bool
        do { proceed = try options.conditions.checkRead(read.metadata) } catch {
            read.body.discard()
            throw error
        }
        guard proceed else {
            read.body.discard()
            return .notModified(visible)
        }
        return .content(Self.content(read, visible: visible, options))
    }

    /// The download token a Firebase download URL carries (minting the first one if needed), after the same
    /// access check and generation conditions as a metadata read. A signed URL never yields one: it grants
    /// reads until it expires, and a token would outlive it.
    public func downloadToken(
        for object: ObjectPath, caller: Caller, conditions: Conditions,
        _ context: RequestContext
    ) async throws(ServiceError) -> (ObjectMetadata, String) {
        let bucket = try bucket(object.bucket, context)
        let (meta, grant) = try await readAccess(object, bucket, caller, true, context)
        guard grant != .signedURL else { throw .forbidden("A signed URL does not grant download URLs.") }
        try conditions.checkWrite(meta)
        return (meta, meta.downloadTokens.first ?? "")
    }

    /// The access check every read shares, then existence, then (when asked) the first download token.
    private func readAccess(
        _ object: ObjectPath, _ bucket: Bucket, _ caller: Caller, _ ensureDownloadToken: Bool,
        _ context: RequestContext
    ) async throws(ServiceError) -> (ObjectMetadata, ReadGrant) {
        let current = try await existing(object, in: bucket, context)
        let grant = try authorizeRead(object, caller: caller, current: current, context)
        guard let current else { throw .noSuchObject(bucket: object.bucket, name: object.name) }
        if ensureDownloadToken, grant != .signedURL, current.downloadTokens.isEmpty {
            return (try await mintFirstToken(object, bucket, current, context), grant)
        }
        return (current, grant)
    }

    /// Mints the first download token of an object, bumping its metageneration. Concurrent
    /// readers race on the (meta)generation they read; the loser re-reads and uses the winner's token.
    /// Never inlined: once per object, and inlined it more than doubled the task frame of every read.
    @inline(never)
    private func mintFirstToken(
        _ object: ObjectPath, _ bucket: Bucket, _ meta: ObjectMetadata,
        _ context: RequestContext
    ) async throws(ServiceError) -> ObjectMetadata {
        var patch = MetadataPatch()
        patch.addDownloadTokens = [SecureRandom.uuidString()]
        let pinned = Preconditions(ifGenerationMatch: meta.generation, ifMetagenerationMatch: meta.metageneration)
        do {
            return try await storage(context, "storage.update") { () async throws(StorageError) in
                try await commitPatch(object, patch, preconditions: pinned, in: bucket)
            }
        } catch  where error.kind == .preconditionFailed {
            guard let again = try await existing(object, in: bucket, context) else {
                throw .noSuchObject(bucket: object.bucket, name: object.name)
            }
            return again
        }
    }

    /// What a caller may see of `meta`: under a signed URL, no download tokens.
    static func visible(_ meta: ObjectMetadata, to grant: ReadGrant) -> ObjectMetadata {
        grant == .signedURL ? withoutTokens(meta) : meta
    }
}

/// How a read is to be served.
public struct ReadOptions: Sendable {
    public var conditions: Conditions
    public var range: RangeRequest?
    /// HEAD: decide and resolve everything, open nothing.
    public var headOnly: Bool
    /// See `metadata(of:caller:conditions:ensureDownloadToken:_:)`.
    public var ensureDownloadToken: Bool
    /// The client accepts a gzip-encoded body (`Accept-Encoding: gzip`): objects stored gzip-encoded are served
    /// as stored; otherwise they are decompressed on the fly.
    public var acceptsGzip: Bool

    public init(
        conditions: Conditions = .none, range: RangeRequest? = nil, headOnly: Bool = false,
        ensureDownloadToken: Bool = false, acceptsGzip: Bool = true
    ) {
        self.conditions = conditions
        self.range = range
        self.headOnly = headOnly
        self.ensureDownloadToken = ensureDownloadToken
        self.acceptsGzip = acceptsGzip
    }
}

public enum MetadataOutcome: Sendable {
    case current(ObjectMetadata)
    /// The client's copy is current (304).
    case notModified(ObjectMetadata)
}

public enum ReadOutcome: Sendable {
    case content(ObjectContent)
    /// The client's copy is current (304).
    case notModified(ObjectMetadata)
}

/// What a read serves: the generation's metadata, the resolved range (nil = whole object) and the bytes (nil
/// for a HEAD).
public struct ObjectContent: Sendable {
    public let metadata: ObjectMetadata
    public let range: ResolvedRange?
    public let body: ObjectBody?
    /// The stored gzip bytes are being decompressed (decompressive transcoding): the body's length is unknown,
    /// and the surface must not announce `Content-Encoding: gzip` or a `Content-Length`.
    public let decompressed: Bool

    init(metadata: ObjectMetadata, range: ResolvedRange?, body: ObjectBody?, decompressed: Bool = false) {
        self.metadata = metadata
        self.range = range
        self.body = body
        self.decompressed = decompressed
    }

    /// Bytes the response carries; nil when not known before they are produced (a decompressed body).
    public var length: Int64? { decompressed ? nil : range?.length ?? metadata.size }
}
