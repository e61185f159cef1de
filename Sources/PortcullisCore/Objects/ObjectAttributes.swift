/// The caller-settable part of an object's metadata, as given when an object is written.
public struct ObjectAttributes: Sendable, Equatable {
    public var contentType: String?
    public var contentEncoding: String?
    public var contentDisposition: String?
    public var contentLanguage: String?
    public var cacheControl: String?
    public var customMetadata: [String: String]
    /// Tokens to store with the new generation (the Gateway mints one when the caller gave none).
    public var downloadTokens: [String]
    /// The storage class to record (`STANDARD` when nil); a label kept with the object, as the JSON API shows it.
    public var storageClass: String?
    /// Cloud Storage's `customTime`.
    public var customTime: Timestamp?
    /// The writer (`ObjectMetadata.owner`). Never read from a request: the service sets it from the caller.
    public var owner: String? = nil

    public init(
        contentType: String? = nil, contentEncoding: String? = nil, contentDisposition: String? = nil,
        contentLanguage: String? = nil, cacheControl: String? = nil, customMetadata: [String: String] = [:],
        downloadTokens: [String] = [], storageClass: String? = nil, customTime: Timestamp? = nil
    ) {
        self.customTime = customTime
        self.storageClass = storageClass
        self.contentType = contentType
        self.contentEncoding = contentEncoding
        self.contentDisposition = contentDisposition
        self.contentLanguage = contentLanguage
        self.cacheControl = cacheControl
        self.customMetadata = customMetadata
        self.downloadTokens = downloadTokens
    }

    /// Every field compared by bytes.
    public static func == (a: ObjectAttributes, b: ObjectAttributes) -> Bool {
        a.contentType.bytesEqual(b.contentType) && a.contentEncoding.bytesEqual(b.contentEncoding)
            && a.contentDisposition.bytesEqual(b.contentDisposition)
            && a.contentLanguage.bytesEqual(b.contentLanguage) && a.cacheControl.bytesEqual(b.cacheControl)
            && a.customMetadata.bytesEqual(b.customMetadata) && a.downloadTokens.bytesEqual(b.downloadTokens)
            && a.storageClass.bytesEqual(b.storageClass) && a.customTime == b.customTime
            && a.owner.bytesEqual(b.owner)
    }
}

/// One field of a metadata patch: leave it, set it, or remove it (JSON `null`).
public enum FieldPatch<Value: Sendable & Equatable>: Sendable, Equatable {
    case unchanged
    case set(Value)
    case remove

    public func applied(to current: Value?) -> Value? {
        switch self {
        case .unchanged: current
        case .set(let value): value
        case .remove: nil
        }
    }
}

/// A metadata update with the merge semantics of a v0 PATCH (README.md: `null` deletes a field, custom metadata merges per key), applied atomically by a backend.
public struct MetadataPatch: Sendable, Equatable {
    public var contentType: FieldPatch<String> = .unchanged
    public var contentEncoding: FieldPatch<String> = .unchanged
    public var contentDisposition: FieldPatch<String> = .unchanged
    public var contentLanguage: FieldPatch<String> = .unchanged
    public var cacheControl: FieldPatch<String> = .unchanged
    /// `true` removes every custom key before `customMetadata` is merged (JSON `"metadata": null`).
    public var clearCustomMetadata = false
    /// Per-key merge: a value sets the key, `nil` removes it.
    public var customMetadata: [String: String?] = [:]
    /// Tokens unioned into the token list (in order, without duplicates).
    public var addDownloadTokens: [String] = []
    /// Tokens removed from the list; the Gateway makes sure at least one token remains.
    public var removeDownloadTokens: [String] = []
    /// A new token list replacing the current one before `add`/`remove` apply (the JSON API sets
    /// `metadata.firebaseStorageDownloadTokens` like any key; `[]` removes every token).
    public var replaceDownloadTokens: [String]?
    /// `customTime`: set or remove (the service refuses moving it back or removing it, as Cloud Storage does).
    public var customTime: FieldPatch<Timestamp> = .unchanged

    public init() {}

    /// The metadata this patch would produce: the same function every backend applies, so rules can judge
    /// `request.resource` before the write. Bumps `metageneration` and sets `updated` to `now`.
    public func applied(to current: ObjectMetadata, now: Timestamp) -> ObjectMetadata {
        var result = current
        result.contentType = contentType.applied(to: current.contentType)
        result.contentEncoding = contentEncoding.applied(to: current.contentEncoding)
        result.contentDisposition = contentDisposition.applied(to: current.contentDisposition)
        result.contentLanguage = contentLanguage.applied(to: current.contentLanguage)
        result.cacheControl = cacheControl.applied(to: current.cacheControl)
        result.customTime = customTime.applied(to: current.customTime)
        if clearCustomMetadata { result.customMetadata = [:] }
        for (key, value) in customMetadata {
            // Keys are byte strings: the patch's key replaces an equivalent stored spelling, and removing a key
            // removes only exactly that key.
            result.customMetadata[exactly: key] = value
        }
        var tokens = (replaceDownloadTokens ?? current.downloadTokens).filter {
            !removeDownloadTokens.containsBytes($0)
        }
        for token in addDownloadTokens where !tokens.containsBytes(token) {
            tokens.append(token)
        }
        result.downloadTokens = tokens
        result.metageneration = current.metageneration + 1
        result.updated = now
        return result
    }
}

/// Conditions on the object's current generation (GCS's `if(Meta)generation(Not)Match` parameters); a write,
/// patch or delete that does not meet them is `StorageError.preconditionFailed`.
public struct Preconditions: Sendable, Equatable {
    /// Required current generation; `0` means "the object must not exist".
    public var ifGenerationMatch: Int64?
    public var ifMetagenerationMatch: Int64?
    /// The current generation must differ (and an object must exist); `0` means "the object must exist".
    public var ifGenerationNotMatch: Int64?
    /// The current metageneration must differ (and an object must exist).
    public var ifMetagenerationNotMatch: Int64?

    public init(
        ifGenerationMatch: Int64? = nil, ifMetagenerationMatch: Int64? = nil,
        ifGenerationNotMatch: Int64? = nil, ifMetagenerationNotMatch: Int64? = nil
    ) {
        self.ifGenerationMatch = ifGenerationMatch
        self.ifMetagenerationMatch = ifMetagenerationMatch
        self.ifGenerationNotMatch = ifGenerationNotMatch
        self.ifMetagenerationNotMatch = ifMetagenerationNotMatch
    }

    public static let none = Preconditions()

    /// Whether `current` (nil when absent) satisfies every condition.
    public func isSatisfied(by current: ObjectMetadata?) -> Bool {
        matchesHold(for: current) && notMatchesHold(for: current)
    }

    /// The `…Match` conditions alone (on a read, their failure is 412).
    public func matchesHold(for current: ObjectMetadata?) -> Bool {
        if let generation = ifGenerationMatch {
            if generation == 0 {
                if current != nil { return false }
            } else if current?.generation != generation {
                return false
            }
        }
        if let metageneration = ifMetagenerationMatch, current?.metageneration != metageneration {
            return false
        }
        return true
    }

    /// The `…NotMatch` conditions alone (on a read, their failure is 304 Not Modified, as GCS answers).
    public func notMatchesHold(for current: ObjectMetadata?) -> Bool {
        if let generation = ifGenerationNotMatch {
            guard let current, generation == 0 || current.generation != generation else { return false }
        }
        if let metageneration = ifMetagenerationNotMatch {
            guard let current, current.metageneration != metageneration else { return false }
        }
        return true
    }
}
