public import PortcullisCore
import Rules
public import Storage

/// The wire-neutral storage service (docs/architecture.md): everything between decoding a request and encoding its
/// response, once, for every API surface.
///
/// It works on typed values — object paths, conditions, attribute sets, byte streams, sealed capabilities as
/// strings — never on raw paths, query strings or JSON. For each operation it authorizes first (rules, the
/// admin key, or a capability the caller presented), before revealing whether the object exists or whether
/// a precondition holds; then it checks conditions, calls the bucket's backend and reports what it decided to
/// the request's record (`RequestContext.record`). Surfaces decode into these calls and encode what they return; they never decide
/// access, existence or preconditions themselves.
public final class StorageService: Sendable {
    public let configuration: ServiceConfiguration
    let buckets: [ExactString: Bucket]
    /// Buckets created through the API (`--bucket-root`), nil when none may be.
    let created: CreatedBuckets?
    let sealer: CapabilitySealer
    let rules: RulesStore
    let decisions: DecisionCounters
    let logger: Logger
    /// Where committed changes go as events (nil: no webhook configured, nothing is recorded).
    let events: (any ChangeEventSink)?

    /// One configured bucket: its backend and what it can do, discovered once.
    struct Bucket: Sendable {
        let name: String
        let backend: any StorageBackend
        /// Resumable staging, when the backend offers it.
        let staging: (any ResumableStaging)?
        /// The backend writes change events in its commit transactions (embedded outbox).
        let outbox: (any ChangeOutbox)?
        /// Reads are a cheap local open (the embedded backend): a whole-object read may open first and decide
        /// after, saving an index lookup, because nothing leaves the process before the decision.
        let readsAreLocal: Bool
        /// Reads answered in place under an event loop's permit, when the backend offers them.
        let inPlace: (any InPlaceReads)?
        /// Moves in one transaction, when the backend offers them.
        let renames: (any AtomicRenames)?
        /// The backend as one that can carry a request's trace upstream, when it calls an upstream.
        let traceable: (any UpstreamTraced)?
        /// Noncurrent generations kept and addressed by number, when the backend offers them.
        let versioned: (any VersionedStorage)?

        /// What `backend` can do, found once through the protocols it adopts. With `template` (the bucket whose
        /// backend `backend` is a traced copy of, so of the same type), only what `template` found is looked up
        /// again: a failed cast walks the runtime's conformance tables, and every upstream request binds.
        init(name: String, backend: any StorageBackend, like template: Bucket? = nil) {
            func adopted<Capability>(_ found: (Bucket) -> Bool) -> Capability? {
                if let template, !found(template) { return nil }
                return backend as? Capability
            }
            self.name = name
            self.backend = backend
            staging = adopted { $0.staging != nil }
            outbox = adopted { $0.outbox != nil }
            readsAreLocal = template?.readsAreLocal ?? (backend is any LocalReads)
            inPlace = adopted { $0.inPlace != nil }
            renames = adopted { $0.renames != nil }
            traceable = adopted { $0.traceable != nil }
            versioned = adopted { $0.versioned != nil }
        }

        /// This bucket with its backend bound to `trace` (itself when the backend has no upstream or there is
        /// no trace): every upstream call the operation makes then carries the request's trace.
        func bound(to trace: Trace?) -> Bucket {
            guard let trace, let traceable else { return self }
            return Bucket(name: name, backend: traceable.traced(by: trace), like: self)
        }

        /// The metadata of `object`, in place when the backend can and `permit` applies.
        /// With `generation` on a versioned backend, that generation, live or noncurrent; elsewhere the generation
        /// is left to `Conditions.selectedGeneration` (only the live one is kept, any other is 404).
        func metadata(of object: ObjectPath, _ permit: (any InPlaceLookupPermit)?, generation: Int64? = nil)
            async throws(StorageError) -> ObjectMetadata
        {
            if let generation, let versioned { return try await versioned.metadata(of: object, generation: generation) }
            if let inPlace, permit != nil { return try await inPlace.metadata(of: object, inPlace: permit) }
            return try await backend.metadata(of: object)
        }

        /// The bytes of `object`, opened in place when the backend can and `permit` applies.
        /// With `generation`, as `metadata(of:_:generation:)`.
        func read(
            _ object: ObjectPath, range: ByteRangeSpec?, _ permit: (any InPlaceLookupPermit)?, generation: Int64? = nil
        ) async throws(StorageError) -> ObjectRead {
            if let generation, let versioned {
                return try await versioned.read(object, generation: generation, range: range)
            }
            if let inPlace, permit != nil { return try await inPlace.read(object, range: range, inPlace: permit) }
            return try await backend.read(object, range: range)
        }
    }

    public init(
        configuration: ServiceConfiguration, backends: [String: any StorageBackend],
        sealer: CapabilitySealer, rules: RulesStore, metrics: MetricsRegistry, logger: Logger,
        events: (any ChangeEventSink)? = nil, bucketRoot: (any BucketProvisioning)? = nil,
        provisioned: [ProvisionedBucket] = []
    ) {
        self.configuration = configuration
        var table: [ExactString: Bucket] = [:]
        for (name, backend) in backends { table[ExactString(name)] = Bucket(name: name, backend: backend) }
        self.buckets = table
        self.created = bucketRoot.map { CreatedBuckets(root: $0, existing: provisioned) }
        self.sealer = sealer
        self.rules = rules
        self.decisions = DecisionCounters(registry: metrics)
        self.logger = logger
        self.events = events
    }

    /// The configured bucket names, in byte order.
    // identity-ok: ExactString orders by bytes
    public var bucketNames: [String] { (Array(buckets.keys) + (created?.names ?? [])).sorted().map(\.string) }

    /// Whether `name` is a bucket this gateway serves, configured or created (compared by bytes).
    public func hasBucket(_ name: String) -> Bool { lookup(ExactString(name)) != nil }

    /// Whether every configured bucket's backend can serve requests now (`/readyz`).
    public func isReady() async -> Bool {
        for bucket in buckets.values where await !bucket.backend.isReady() { return false }
        return true
    }

    func bucket(_ name: String) throws(ServiceError) -> Bucket {
        guard let bucket = lookup(ExactString(name)) else { throw .notFound("Bucket \(name) not found.") }
        return bucket
    }

    /// The bucket, with its backend bound to the request's trace (`Bucket.bound(to:)`).
    func bucket(_ name: String, _ context: RequestContext) throws(ServiceError) -> Bucket {
        try bucket(name).bound(to: context.trace)
    }

    /// Configured buckets first (no lock on that path), then the created ones.
    private func lookup(_ name: ExactString) -> Bucket? {
        if let bucket = buckets[name] { return bucket }
        return created?.bucket(name)?.bucket
    }

    /// Validates a name against the object-name policy (`ObjectPath`) before any backend sees it.
    /// Names under `multipartPrefix` belong to the service's multipart staging and are refused here, so no
    /// surface can read, overwrite or delete a staged part.
    public static func objectPath(_ bucket: String, _ name: String) throws(ServiceError) -> ObjectPath {
        guard !name.bytesHasPrefix(multipartPrefix) else {
            throw .badRequest("Object names starting with \(multipartPrefix) are reserved.")
        }
        do { return try ObjectPath(bucket: bucket, name: name) } catch { throw ServiceError(error) }
    }

    /// Runs a storage call, adding its duration to the request's upstream time and converting its error. On a
    /// recorded trace the call is a span named `span` (`storage.read`, `storage.commit`, …).
    func storage<T>(_ context: RequestContext, _ span: String, _ body: () async throws(StorageError) -> T)
        async throws(ServiceError) -> T
    {
        let start = MonotonicClock.nanoseconds()
        var traced = context.trace?.startSpan(span)
        defer {
            context.record.addUpstreamTime(nanos: MonotonicClock.nanoseconds() &- start)
            traced?.end()
        }
        do { return try await body() } catch {
            traced?.setError(error.description)
            throw ServiceError(error)
        }
    }

    /// The current metadata, or nil when the object does not exist (any other failure is thrown).
    func existing(
        _ object: ObjectPath, in bucket: Bucket, _ context: RequestContext, generation: Int64? = nil
    ) async throws(ServiceError) -> ObjectMetadata? {
        let start = MonotonicClock.nanoseconds()
        let span = context.trace?.startSpan("storage.lookup")
        defer {
            context.record.addUpstreamTime(nanos: MonotonicClock.nanoseconds() &- start)
            span?.end()
        }
        do {
            return try await bucket.metadata(of: object, context.inPlacePermit, generation: generation)
        } catch .notFound {
            return nil
        } catch {
            throw ServiceError(error)
        }
    }
}

/// The service's settings, from the configuration contract (docs/configuration.md). Built by the executable.
public struct ServiceConfiguration: Sendable {
    /// Upload size ceiling (`--max-object-bytes`).
    public var maxObjectBytes: Int64
    /// Largest JSON request body a surface collects (metadata, PATCH, resumable start, multipart JSON part).
    public var maxJSONBodyBytes: Int

    public static let defaultMaxObjectBytes: Int64 = 5 << 40  // 5 TiB

    public init(maxObjectBytes: Int64 = ServiceConfiguration.defaultMaxObjectBytes, maxJSONBodyBytes: Int = 1 << 20) {
        self.maxObjectBytes = maxObjectBytes
        self.maxJSONBodyBytes = maxJSONBodyBytes
    }
}
