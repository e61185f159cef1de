public import PortcullisCore

/// Buckets as resources: what the Cloud Storage clients fetch before working on objects.
extension StorageService {
    /// The resource of bucket `name`, for any caller: it reveals the name (which every object URL carries)
    /// and fixed facts, nothing about the objects. Unknown buckets are 404.
    public func bucketInfo(_ name: String, caller: Caller, _ context: RequestContext) throws(ServiceError)
        -> BucketInfo
    {
        let bucket = try bucket(name, context)
        if caller.isAdmin { context.record.decision = .admin }
        return BucketInfo(name: bucket.name)
    }

    /// Every configured bucket, in byte order. Admin only: the rules speak about objects, and the set of
    /// buckets a deployment serves is not something an end user needs to enumerate.
    public func listBuckets(caller: Caller, _ context: RequestContext) throws(ServiceError) -> [BucketInfo] {
        guard caller.isAdmin else { throw .forbidden("Listing buckets needs admin credentials.") }
        context.record.decision = .admin
        return bucketNames.map { BucketInfo(name: $0) }
    }
}

/// A bucket as the Cloud Storage API describes it. Location and class are fixed: the gateway's buckets are
/// wherever their backends are, and the clients only display these fields.
public struct BucketInfo: Sendable, Equatable {
    public var name: String
    public var timeCreated: Timestamp?
    public var location: String
    public var locationType: String

    public init(
        name: String, timeCreated: Timestamp? = nil, location: String = "US",
        locationType: String = "multi-region"
    ) {
        self.name = name
        self.timeCreated = timeCreated
        self.location = location
        self.locationType = locationType
    }
}
