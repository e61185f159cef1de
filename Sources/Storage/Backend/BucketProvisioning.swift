public import PortcullisCore

/// What an operator lets the API set on a bucket it created: the fields Cloud Storage clients set in practice.
public struct BucketSettings: Sendable, Equatable {
    /// Object versioning (`versioning.enabled`).
    public var versioningEnabled: Bool
    /// `labels`: lower-case keys and values, as Cloud Storage restricts them.
    public var labels: [String: String]

    public init(versioningEnabled: Bool = false, labels: [String: String] = [:]) {
        self.versioningEnabled = versioningEnabled
        self.labels = labels
    }
}

/// A bucket created through the API: its backend, and the resource facts the API shows.
public struct ProvisionedBucket: Sendable {
    public let name: String
    public let timeCreated: Timestamp
    public let updated: Timestamp
    /// Bumped by every settings change (`ifMetagenerationMatch` on a bucket patch compares with it).
    public let metageneration: Int64
    public let settings: BucketSettings
    public let backend: any StorageBackend

    public init(
        name: String, timeCreated: Timestamp, updated: Timestamp, metageneration: Int64, settings: BucketSettings,
        backend: any StorageBackend
    ) {
        self.name = name
        self.timeCreated = timeCreated
        self.updated = updated
        self.metageneration = metageneration
        self.settings = settings
        self.backend = backend
    }
}

/// Where buckets created through the API live (`--bucket-root`): created, changed and removed there, and found
/// again at start-up. Buckets named by `--bucket` are configuration and never pass through here.
public protocol BucketProvisioning: Sendable {
    /// Every bucket created here, in byte order of name.
    func existingBuckets() async throws(StorageError) -> [ProvisionedBucket]
    /// Creates `name`; an existing one is `.conflict`.
    func createBucket(_ name: String, settings: BucketSettings) async throws(StorageError) -> ProvisionedBucket
    /// Replaces the settings of `name`, when its metageneration is `ifMetagenerationMatch` (if given; else
    /// `.preconditionFailed`); a missing bucket is `.bucketNotFound`.
    func updateBucket(_ name: String, settings: BucketSettings, ifMetagenerationMatch: Int64?)
        async throws(StorageError) -> ProvisionedBucket
    /// Removes `name` when it holds no object (else `.conflict`) and no upload in progress.
    func deleteBucket(_ name: String) async throws(StorageError)
}
