/// The stored description of one object generation, in backend-neutral form.
///
/// Equality compares every text field by its bytes (names, tokens and metadata are identities; see
/// `ExactString`). This is the model; the v0 wire format (strings for numbers, base64 hashes, comma-joined tokens) is produced
/// by the Gateway, and the rules `resource` object is derived from this by the Rules target.
public struct ObjectMetadata: Sendable, Equatable {
    public var bucket: String
    public var name: String
    /// Changes on every data write; never reused for one name.
    public var generation: Int64
    /// Starts at 1 for each generation; +1 on every metadata change.
    public var metageneration: Int64
    public var size: Int64
    public var timeCreated: Timestamp
    public var updated: Timestamp
    /// Base64 of the 16-byte MD5 digest, when the backend knows it.
    public var md5Hash: String?
    /// Base64 of the big-endian CRC32C, when the backend knows it.
    public var crc32c: String?
    public var storageClass: String
    public var contentType: String?
    public var contentEncoding: String?
    public var contentDisposition: String?
    public var contentLanguage: String?
    public var cacheControl: String?
    /// User custom metadata (never contains `firebaseStorageDownloadTokens`: those are in `downloadTokens`).
    public var customMetadata: [String: String]
    public var downloadTokens: [String]
    /// Cloud Storage's user-settable `customTime`: set by a write or a patch, only ever moved forward.
    public var customTime: Timestamp?
    /// When this generation stopped being the live one (Cloud Storage's `timeDeleted`): set only on a
    /// noncurrent generation a versioned bucket keeps; nil for the live object.
    public var timeDeleted: Timestamp? = nil
    /// Who wrote this generation, as Cloud Storage's `owner.entity` names it (`user-ID`): the uid of the
    /// signed-in caller, or a service account's email; nil for anonymous and admin-key writes and where the
    /// backend keeps no owner. Shown only under `projection=full`.
    public var owner: String? = nil

    public init(
        bucket: String, name: String, generation: Int64, metageneration: Int64 = 1, size: Int64,
        timeCreated: Timestamp, updated: Timestamp, md5Hash: String? = nil, crc32c: String? = nil,
        storageClass: String = "STANDARD", contentType: String? = nil, contentEncoding: String? = nil,
        contentDisposition: String? = nil, contentLanguage: String? = nil, cacheControl: String? = nil,
        customMetadata: [String: String] = [:], downloadTokens: [String] = [], customTime: Timestamp? = nil
    ) {
        self.customTime = customTime
        self.bucket = bucket
        self.name = name
        self.generation = generation
        self.metageneration = metageneration
        self.size = size
        self.timeCreated = timeCreated
        self.updated = updated
        self.md5Hash = md5Hash
        self.crc32c = crc32c
        self.storageClass = storageClass
        self.contentType = contentType
        self.contentEncoding = contentEncoding
        self.contentDisposition = contentDisposition
        self.contentLanguage = contentLanguage
        self.cacheControl = cacheControl
        self.customMetadata = customMetadata
        self.downloadTokens = downloadTokens
    }

    /// The custom-metadata key under which Firebase stores download tokens in GCS (and we accept on writes).
    public static let downloadTokensKey = "firebaseStorageDownloadTokens"

    /// A strong validator for this exact generation and metageneration (unquoted; the HTTP layer quotes it).
    public var etag: String { "\(generation)/\(metageneration)" }

    public static func == (a: ObjectMetadata, b: ObjectMetadata) -> Bool {
        a.generation == b.generation && a.metageneration == b.metageneration && a.size == b.size
            && a.timeCreated == b.timeCreated && a.updated == b.updated
            && a.bucket.bytesEqual(b.bucket) && a.name.bytesEqual(b.name)
            && a.md5Hash.bytesEqual(b.md5Hash) && a.crc32c.bytesEqual(b.crc32c)
            && a.storageClass.bytesEqual(b.storageClass) && a.contentType.bytesEqual(b.contentType)
            && a.contentEncoding.bytesEqual(b.contentEncoding) && a.contentDisposition.bytesEqual(b.contentDisposition)
            && a.contentLanguage.bytesEqual(b.contentLanguage) && a.cacheControl.bytesEqual(b.cacheControl)
            && a.customMetadata.bytesEqual(b.customMetadata) && a.downloadTokens.bytesEqual(b.downloadTokens)
            && a.customTime == b.customTime && a.owner.bytesEqual(b.owner)
    }
}
