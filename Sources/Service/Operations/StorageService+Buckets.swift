public import PortcullisCore
public import Storage

/// Buckets as resources: what the Cloud Storage clients fetch before working on objects, and — for the admin,
/// under a bucket root (`--bucket-root`) — create, change and delete. Configured buckets (`--bucket`) are
/// configuration: they are shown, never changed here.
extension StorageService {
    /// The resource of bucket `name`, for any caller: it reveals the name (which every object URL carries)
    /// and its settings, nothing about the objects. Unknown buckets are 404.
    public func bucketInfo(_ name: String, caller: Caller, _ context: RequestContext) throws(ServiceError)
        -> BucketInfo
    {
        let bucket = try bucket(name, context)
        if caller.isAdmin { context.record.decision = .admin }
        return info(of: bucket.name)
    }

    /// Every bucket, configured and created, in byte order. Admin only: the rules speak about objects, and the
    /// set of buckets a deployment serves is not something an end user needs to enumerate.
    public func listBuckets(caller: Caller, _ context: RequestContext) throws(ServiceError) -> [BucketInfo] {
        guard caller.isAdmin else { throw .forbidden("Listing buckets needs admin credentials.") }
        context.record.decision = .admin
        return bucketNames.map(info(of:))
    }

    /// Creates `name` under the bucket root (admin only).
    public func createBucket(
        _ name: String, settings: BucketSettings, caller: Caller, _ context: RequestContext
    ) async throws(ServiceError) -> BucketInfo {
        let created = try bucketRoot(caller, context, "Creating")
        try Self.checkBucketName(name)
        if buckets[ExactString(name)] != nil || created.bucket(ExactString(name)) != nil {
            throw ServiceError(.conflict, "You already own this bucket. Please select another name.")
        }
        let info = try await storage(context, "storage.bucket.create") { () async throws(StorageError) in
            try await created.root.createBucket(name, settings: settings)
        }
        created.store(info)
        return BucketInfo(info)
    }

    /// Replaces the settings of a created bucket (admin only); `ifMetagenerationMatch` guards against a
    /// concurrent change.
    public func updateBucket(
        _ name: String, settings: BucketSettings, ifMetagenerationMatch: Int64?, caller: Caller,
        _ context: RequestContext
    ) async throws(ServiceError) -> BucketInfo {
        let created = try createdBucket(name, caller, context, "Changing")
        let info = try await storage(context, "storage.bucket.update") { () async throws(StorageError) in
            try await created.root.updateBucket(name, settings: settings, ifMetagenerationMatch: ifMetagenerationMatch)
        }
        created.store(info)
        return BucketInfo(info)
    }

    /// Deletes an empty created bucket (admin only): 409 while it holds objects; unfinished uploads go with it.
    public func deleteBucket(
        _ name: String, ifMetagenerationMatch: Int64?, caller: Caller, _ context: RequestContext
    ) async throws(ServiceError) {
        let created = try createdBucket(name, caller, context, "Deleting")
        if let expected = ifMetagenerationMatch, created.bucket(ExactString(name))?.info.metageneration != expected {
            throw .preconditionFailed()
        }
        // Unfinished multipart uploads are not objects (no listing shows them, so no client can delete them
        // first): like resumable sessions, they go with the bucket.
        if let bucket = try? bucket(name, context) { await removeMultipartStaging(bucket, context) }
        try await storage(context, "storage.bucket.delete") { () async throws(StorageError) in
            try await created.root.deleteBucket(name)
        }
        created.remove(name)
    }

    /// The created buckets, for an admin caller; a gateway without a bucket root says how to get one.
    private func bucketRoot(_ caller: Caller, _ context: RequestContext, _ verb: String) throws(ServiceError)
        -> CreatedBuckets
    {
        guard caller.isAdmin else { throw .forbidden("\(verb) buckets needs admin credentials.") }
        context.record.decision = .admin
        guard let created else {
            throw ServiceError(
                .notImplemented,
                "Buckets are configured with --bucket; start the gateway with --bucket-root to manage them here.")
        }
        return created
    }

    /// `name` as a bucket created here: unknown is 404; a configured one is refused, saying why.
    private func createdBucket(_ name: String, _ caller: Caller, _ context: RequestContext, _ verb: String)
        throws(ServiceError) -> CreatedBuckets
    {
        let created = try bucketRoot(caller, context, verb)
        if buckets[ExactString(name)] != nil {
            throw ServiceError(
                .conflict, "Bucket \(name) is configured with --bucket; change it in the configuration instead.")
        }
        guard created.bucket(ExactString(name)) != nil else { throw .notFound("Bucket \(name) not found.") }
        return created
    }

    private func info(of name: String) -> BucketInfo {
        if let entry = created?.bucket(ExactString(name)) { return BucketInfo(entry.info) }
        return BucketInfo(name: name)
    }

    /// Cloud Storage's naming rules for the names a bucket root takes: 3–63 bytes of lower-case letters,
    /// digits, `-`, `_` and `.`, starting and ending with a letter or digit, not `goog…`.
    static func checkBucketName(_ name: String) throws(ServiceError) {
        let bytes = Array(name.utf8)
        let valid =
            (3...63).contains(bytes.count)
            && bytes.allSatisfy {
                isLowerAlphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".")
            }
            && isLowerAlphanumeric(bytes.first ?? 0) && isLowerAlphanumeric(bytes.last ?? 0)
            && !bytes.starts(with: Array("goog".utf8))
        guard valid else { throw .badRequest("Invalid bucket name: '\(name)'.") }
    }

    private static func isLowerAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}

/// A bucket as the Cloud Storage API describes it. Location and class are fixed: the gateway's buckets are
/// wherever their backends are, and the clients only display these fields.
public struct BucketInfo: Sendable, Equatable {
    public var name: String
    public var timeCreated: Timestamp?
    public var updated: Timestamp?
    public var metageneration: Int64
    public var versioningEnabled: Bool
    public var labels: [String: String]
    public var location: String
    public var locationType: String

    public init(
        name: String, timeCreated: Timestamp? = nil, updated: Timestamp? = nil, metageneration: Int64 = 1,
        versioningEnabled: Bool = false, labels: [String: String] = [:], location: String = "US",
        locationType: String = "multi-region"
    ) {
        self.name = name
        self.timeCreated = timeCreated
        self.updated = updated
        self.metageneration = metageneration
        self.versioningEnabled = versioningEnabled
        self.labels = labels
        self.location = location
        self.locationType = locationType
    }

    init(_ created: ProvisionedBucket) {
        self.init(
            name: created.name, timeCreated: created.timeCreated, updated: created.updated,
            metageneration: created.metageneration, versioningEnabled: created.settings.versioningEnabled,
            labels: created.settings.labels)
    }
}
