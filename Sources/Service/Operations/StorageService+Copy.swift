public import PortcullisCore
import Storage
import Synchronization

/// Server-side copy (the JSON API's copyTo and rewriteTo) and compose: the source bytes stream into an upload
/// of the destination, so the same path works between any two backends, and the destination is admitted and
/// committed exactly as an upload is (early and commit-time rules `create`, preconditions).
///
/// Each source is authorized as a read (rules `get` for its caller, or admin) before anything about it is
/// revealed, then its conditions are checked; the bytes are then opened and must be the generation that was
/// judged (a source overwritten in between fails the call, 503, rather than copying bytes nobody judged).
extension StorageService {
    /// Most sources of one compose (GCS's limit).
    public static let maxComposeSources = 32

    /// Copies `request.source` to `request.destination` (any buckets), returning the new object.
    public func copy(_ request: CopyRequest, caller: Caller, _ context: RequestContext) async throws(ServiceError)
        -> ObjectMetadata
    {
        let sourceBucket = try bucket(request.source.bucket, context)
        _ = try bucket(request.destination.bucket, context)
        let source = try await judgeSource(request.source, request.sourceConditions, sourceBucket, caller, context)
        let body = try await openSource(request.source, generation: source.generation, sourceBucket, context)
        var attributes = Self.attributes(of: request.overrides.applied(to: source, now: .now()))
        attributes.storageClass = request.storageClass
        let upload = UploadRequest(
            object: request.destination, attributes: attributes, possibleSizes: [source.size],
            expectedMD5: source.md5Hash, preconditions: request.destinationPreconditions,
            mintDownloadToken: false)
        return try await self.upload(upload, body: body, caller: caller, context)
    }

    /// Concatenates `request.sources` (in order, same bucket as the destination) into `request.destination`.
    public func compose(_ request: ComposeRequest, caller: Caller, _ context: RequestContext)
        async throws(ServiceError) -> ObjectMetadata
    {
        guard (1...Self.maxComposeSources).contains(request.sources.count) else {
            throw .badRequest("A compose takes 1 to \(Self.maxComposeSources) source objects.")
        }
        let bucket = try bucket(request.destination.bucket, context)
        var judged: [(ObjectPath, ObjectMetadata)] = []
        for source in request.sources {
            let path = try Self.objectPath(request.destination.bucket, source.name)
            judged.append((path, try await judgeSource(path, source.conditions, bucket, caller, context)))
        }
        // The destination's attributes are only what the request gives: no content type when it names none, as
        // Cloud Storage composes.
        let attributes = request.attributes
        let total = judged.reduce(Int64(0)) { $0 + $1.1.size }
        let parts = judged
        let body = ConcatenatedStream(count: parts.count, length: total) { [self] index throws(ServiceError) in
            try await openSource(parts[index].0, generation: parts[index].1.generation, bucket, context)
        }
        let upload = UploadRequest(
            object: request.destination, attributes: attributes, possibleSizes: [total],
            preconditions: request.destinationPreconditions, mintDownloadToken: false)
        return try await self.upload(upload, body: body, caller: caller, context)
    }

    /// The source's current metadata, after the read is authorized and its conditions hold (a failed
    /// `…NotMatch` is 412 here, not 304: a copy has no cached copy to keep).
    func judgeSource(
        _ source: ObjectPath, _ conditions: Conditions, _ bucket: Bucket, _ caller: Caller,
        _ context: RequestContext
    ) async throws(ServiceError) -> ObjectMetadata {
        let current = try await existing(source, in: bucket, context)
        _ = try authorizeRead(source, caller: Caller(principal: caller.principal), current: current, context)
        guard let current else { throw .noSuchObject(bucket: source.bucket, name: source.name) }
        try conditions.checkWrite(current)
        return current
    }

    /// Opens the bytes of generation `generation` of `source`.
    func openSource(_ source: ObjectPath, generation: Int64, _ bucket: Bucket, _ context: RequestContext)
        async throws(ServiceError) -> any ByteStream
    {
        let read: ObjectRead
        do {
            read = try await storage(context, "storage.read") { () async throws(StorageError) in
                try await bucket.read(source, range: nil, context.inPlacePermit)
            }
        } catch  where error.kind == .notFound {
            throw .unavailable("A source object was deleted during the copy; retry.", retryAfter: 1)
        }
        guard read.metadata.generation == generation else {
            read.body.discard()
            throw .unavailable("A source object changed during the copy; retry.", retryAfter: 1)
        }
        return read.body.byteStream()
    }

    static func attributes(of meta: ObjectMetadata) -> ObjectAttributes {
        ObjectAttributes(
            contentType: meta.contentType, contentEncoding: meta.contentEncoding,
            contentDisposition: meta.contentDisposition, contentLanguage: meta.contentLanguage,
            cacheControl: meta.cacheControl, customMetadata: meta.customMetadata,
            downloadTokens: meta.downloadTokens)
    }
}

/// A server-side copy: the source (its generation and conditions), the destination and its preconditions,
/// and the fields the destination takes instead of the source's.
public struct CopyRequest: Sendable {
    public var source: ObjectPath
    /// `ifSourceGeneration…` and `sourceGeneration` (as the selected generation).
    public var sourceConditions: Conditions
    public var destination: ObjectPath
    public var destinationPreconditions: Preconditions
    /// Applied to the source's attributes (fields it leaves unchanged are copied; download tokens included,
    /// as GCS copies the metadata key that holds them).
    public var overrides: MetadataPatch
    /// The destination's storage class (`destinationStorageClass`); nil: the default, `STANDARD`.
    public var storageClass: String?

    public init(
        source: ObjectPath, sourceConditions: Conditions = .none, destination: ObjectPath,
        destinationPreconditions: Preconditions = .none, overrides: MetadataPatch = MetadataPatch(),
        storageClass: String? = nil
    ) {
        self.storageClass = storageClass
        self.source = source
        self.sourceConditions = sourceConditions
        self.destination = destination
        self.destinationPreconditions = destinationPreconditions
        self.overrides = overrides
    }
}

/// A compose: sources in order (names in the destination's bucket, each with its own conditions), the
/// destination's attributes (its content type defaults to the first source's) and preconditions.
public struct ComposeRequest: Sendable {
    public struct Source: Sendable {
        public var name: String
        /// `generation` (selected) and `objectPreconditions.ifGenerationMatch`.
        public var conditions: Conditions

        public init(name: String, conditions: Conditions = .none) {
            self.name = name
            self.conditions = conditions
        }
    }

    public var destination: ObjectPath
    public var sources: [Source]
    public var attributes: ObjectAttributes
    public var destinationPreconditions: Preconditions

    public init(
        destination: ObjectPath, sources: [Source], attributes: ObjectAttributes = ObjectAttributes(),
        destinationPreconditions: Preconditions = .none
    ) {
        self.destination = destination
        self.sources = sources
        self.attributes = attributes
        self.destinationPreconditions = destinationPreconditions
    }
}

/// Several sources' bytes as one stream, each opened only when the previous one ended (one source open at a
/// time). Like every `ByteStream` it has one consumer, which never calls `next` concurrently with itself;
/// `cancel` may come from anywhere and is guarded by the lock. That contract is why it is `@unchecked Sendable`.
final class ConcatenatedStream: ByteStream, @unchecked Sendable {
    typealias Opener = @Sendable (Int) async throws(ServiceError) -> any ByteStream

    private let count: Int
    private let open: Opener
    let expectedLength: Int64?
    /// Consumer-only: the next source to open.
    private var index = 0
    private let current = Mutex<(stream: (any ByteStream)?, cancelled: Bool)>((nil, false))

    init(count: Int, length: Int64, open: @escaping Opener) {
        self.count = count
        self.expectedLength = length
        self.open = open
    }

    func next(maxLength: Int) async throws -> [UInt8]? {
        while true {
            let (stream, cancelled) = current.withLock { ($0.stream, $0.cancelled) }
            if cancelled { throw ByteStreamError.cancelled }
            if let stream {
                if let chunk = try await stream.next(maxLength: maxLength) { return chunk }
                current.withLock { $0.stream = nil }
            }
            guard index < count else { return nil }
            let opened = try await open(index)
            index += 1
            let stillWanted = current.withLock { state -> Bool in
                guard !state.cancelled else { return false }
                state.stream = opened
                return true
            }
            if !stillWanted {
                opened.cancel()
                throw ByteStreamError.cancelled
            }
        }
    }

    func cancel() {
        let stream = current.withLock { state -> (any ByteStream)? in
            state.cancelled = true
            defer { state.stream = nil }
            return state.stream
        }
        stream?.cancel()
    }
}
