public import PortcullisCore

/// The conditions a request puts on the object's current state: GCS's generation preconditions plus the HTTP
/// validators (RFC 9110 §13). Surfaces parse them from their query parameters and headers; the service
/// evaluates them — after the access decision, never before.
public struct Conditions: Sendable, Equatable {
    /// `ifGenerationMatch` and friends.
    public var generation: Preconditions
    /// `If-Match`: one of these strong tags must be the current one (412 otherwise).
    public var ifMatch: EntityTagList?
    /// `If-None-Match`: a read answers 304 when one of these (weakly compared) is current.
    public var ifNoneMatch: EntityTagList?
    /// `If-Modified-Since`: a read answers 304 when the object is not newer (ignored with `If-None-Match`).
    public var ifModifiedSince: Timestamp?
    /// `If-Unmodified-Since`: 412 when the object is newer (ignored with `If-Match`).
    public var ifUnmodifiedSince: Timestamp?
    /// The generation the request names (the JSON API's `generation=`). On a versioned backend the service looks
    /// that generation up by number (it may be noncurrent); elsewhere only the live generation is kept, so naming
    /// any other one is "no such object" (404), judged like every condition after the access decision.
    public var selectedGeneration: Int64?

    public init(
        generation: Preconditions = .none, ifMatch: EntityTagList? = nil, ifNoneMatch: EntityTagList? = nil,
        ifModifiedSince: Timestamp? = nil, ifUnmodifiedSince: Timestamp? = nil
    ) {
        self.generation = generation
        self.ifMatch = ifMatch
        self.ifNoneMatch = ifNoneMatch
        self.ifModifiedSince = ifModifiedSince
        self.ifUnmodifiedSince = ifUnmodifiedSince
    }

    public static let none = Conditions()

    /// For a write, patch or delete: every condition must hold (412 otherwise).
    func checkWrite(_ current: ObjectMetadata) throws(ServiceError) {
        try checkSelected(current)
        guard generation.isSatisfied(by: current) else { throw .preconditionFailed() }
        try checkStrongValidators(current)
    }

    /// For a read: `…Match`, `If-Match` and `If-Unmodified-Since` failing is 412; `…NotMatch` failing, or
    /// `If-None-Match`/`If-Modified-Since` showing the client's copy is current, is 304 (returns `false`).
    /// Returns `true` when the read proceeds.
    func checkRead(_ current: ObjectMetadata) throws(ServiceError) -> Bool {
        try checkSelected(current)
        guard generation.matchesHold(for: current) else { throw .preconditionFailed() }
        try checkStrongValidators(current)
        guard generation.notMatchesHold(for: current) else { return false }
        if let ifNoneMatch {
            return !ifNoneMatch.matches(current, weak: true)
        }
        if let since = ifModifiedSince {
            return current.updated.secondsSinceEpoch > since.secondsSinceEpoch
        }
        return true
    }

    private func checkSelected(_ current: ObjectMetadata) throws(ServiceError) {
        if let selectedGeneration, selectedGeneration != current.generation {
            throw .noSuchObject(bucket: current.bucket, name: current.name)
        }
    }

    private func checkStrongValidators(_ current: ObjectMetadata) throws(ServiceError) {
        if let ifMatch {
            guard ifMatch.matches(current, weak: false) else { throw .preconditionFailed() }
        } else if let since = ifUnmodifiedSince, current.updated.secondsSinceEpoch > since.secondsSinceEpoch {
            throw .preconditionFailed()
        }
    }
}

/// An `If-Match`/`If-None-Match` field value: `*`, or entity tags (each possibly weak, `W/"…"`).
public struct EntityTagList: Sendable, Equatable {
    public var any: Bool
    /// `(opaque tag with its quotes, weak)`.
    public var tags: [(tag: String, weak: Bool)]

    public init(parsing header: String) {
        any = false
        tags = []
        // By bytes: a comma or a space followed by a combining mark is one `Character` with it.
        for raw in header.bytesSplit(separator: UInt8(ascii: ",")) {
            let tag = raw.trimmingSpaces()
            if tag.bytesEqual("*") {
                any = true
            } else if let opaque = tag.bytesRemovingPrefix("W/") {
                tags.append((opaque, true))
            } else {
                tags.append((tag, false))
            }
        }
    }

    /// The list with each bare tag (no double quotes) quoted: Cloud Storage's JSON API takes the resource's
    /// `etag` as sent (`If-Match: 123/1`, as google-cloud-storage's `if_etag_match` sends it) as well as the
    /// quoted form of the `ETag` header.
    public func quotingBareTags() -> EntityTagList {
        var list = self
        list.tags = tags.map { entry in
            entry.tag.utf8.first == UInt8(ascii: "\"") ? entry : ("\"" + entry.tag + "\"", entry.weak)
        }
        return list
    }

    /// Whether the list names `current` (`*` names any existing object). `weak` accepts `W/` tags (If-None-Match
    /// compares weakly, RFC 9110 §13.1.2); otherwise they never match.
    func matches(_ current: ObjectMetadata, weak: Bool) -> Bool {
        if any { return true }
        let etag = EntityTag.quoted(current)
        return tags.contains { ($0.weak ? weak : true) && $0.tag.bytesEqual(etag) }
    }

    public static func == (a: EntityTagList, b: EntityTagList) -> Bool {
        a.any == b.any && a.tags.elementsEqual(b.tags) { $0.tag.bytesEqual($1.tag) && $0.weak == $1.weak }
    }
}

/// The strong validator of one generation and metageneration.
public enum EntityTag {
    /// `"generation/metageneration"`, quoted as it appears in `ETag`.
    public static func quoted(_ meta: ObjectMetadata) -> String {
        var bytes = [UInt8]()
        bytes.reserveCapacity(44)
        appendQuoted(meta, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the bytes of `quoted(meta)` (response heads write it without a `String`).
    public static func appendQuoted(_ meta: ObjectMetadata, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        DecimalText.append(meta.generation, to: &out)
        out.append(UInt8(ascii: "/"))
        DecimalText.append(meta.metageneration, to: &out)
        out.append(UInt8(ascii: "\""))
    }
}

/// A `Range` request: the range, and the `If-Range` validator that decides whether it applies.
public struct RangeRequest: Sendable, Equatable {
    public var spec: ByteRangeSpec
    public var ifRange: IfRange?

    public init(spec: ByteRangeSpec, ifRange: IfRange? = nil) {
        self.spec = spec
        self.ifRange = ifRange
    }

    /// `If-Range` (RFC 9110 §13.1.5): a strong entity tag or a date; anything else never matches.
    public enum IfRange: Sendable, Equatable {
        case entityTag(String)
        case date(Timestamp)
        case unusable
    }

    /// Whether the range applies to `current` (else the whole object is served).
    func applies(to current: ObjectMetadata) -> Bool {
        switch ifRange {
        case nil: true
        case .entityTag(let tag)?: tag.bytesEqual(EntityTag.quoted(current))
        case .date(let date)?: date.secondsSinceEpoch == current.updated.secondsSinceEpoch
        case .unusable?: false
        }
    }
}
