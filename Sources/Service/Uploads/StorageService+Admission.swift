import Crypto
import PortcullisCore
import Rules
import Storage

/// The rules check of an upload, twice: early, at the request head, with what is declared; and finally,
/// just before commit, with the true size and hashes.
extension StorageService {
    /// What the early check concluded.
    enum Admission: Equatable {
        /// Allowed whatever the body turns out to be (admin): preconditions may be answered now.
        case allowed
        /// Not refused with what is known; the check at commit decides. Nothing about the object (not even
        /// whether a precondition holds) may be revealed before then.
        case pending
    }

    /// Most custom-metadata values tried as the MD5 by `admit`; with more keys it defers instead.
    static let maxPrecheckMetadataVariants = 16

    /// The early rules check, made before any byte is read, so a denied upload is refused without storing its
    /// body. It sees only what is declared (size, maybe an `md5Hash`; never the crc32c), so a denial is final
    /// only when it does not hinge on those unknowns: the proposal is judged with the hashes absent, with
    /// placeholder hashes, with the existing object's hashes and with each custom-metadata value as the MD5
    /// (rules such as `request.resource.md5Hash == request.resource.metadata.md5`), at each possible size; with
    /// an unknown size the check defers. Any variant allowing it defers the decision to commit. Decisions here
    /// are counted only when they end the request, so every upload is counted once.
    func admit(_ request: UploadRequest, principal: Principal?, existing: ObjectMetadata?,
               _ context: RequestContext) throws(ServiceError) -> Admission {
        if principal?.isAdmin == true { return .allowed }
        guard let size = request.possibleSizes.first else { return .pending }
        let object = request.object
        let base = Self.proposal(object, request.attributes, size: size, md5: request.expectedMD5, existing: existing)
        var variants = [base]
        for other in request.possibleSizes.dropFirst() {
            var resized = base
            resized.size = other
            variants.append(resized)
        }
        var placeholder = base
        placeholder.md5Hash = request.expectedMD5 ?? "AAAAAAAAAAAAAAAAAAAAAA=="
        placeholder.crc32c = "AAAAAA=="
        variants.append(placeholder)
        if let existing {
            var same = base
            same.md5Hash = request.expectedMD5 ?? existing.md5Hash
            same.crc32c = existing.crc32c
            variants.append(same)
        }
        if request.expectedMD5 == nil {
            // Bounded work per request: with many custom keys the early check defers to the final one.
            guard request.attributes.customMetadata.count <= Self.maxPrecheckMetadataVariants else { return .pending }
            for value in request.attributes.customMetadata.values {
                var declared = base
                declared.md5Hash = value
                variants.append(declared)
            }
        }
        let now = Timestamp.now()
        for proposal in variants {
            let decision = judge(RulesRequest(method: .create, bucket: object.bucket, path: object.name,
                                              auth: principal, time: now, resource: existing,
                                              requestResource: proposal))
            if decision.allowed { return .pending }
        }
        try authorize(.create, (object.bucket, object.name), principal: principal, resource: existing,
                      requestResource: base, context)
        return .pending
    }

    /// The object an upload would create, from what is declared before the bytes arrive.
    static func proposal(_ object: ObjectPath, _ a: ObjectAttributes, size: Int64, md5: String?,
                         existing: ObjectMetadata?) -> ObjectMetadata {
        let now = Timestamp.now()
        return ObjectMetadata(
            bucket: object.bucket, name: object.name,
            generation: max(now.nanosecondsSinceEpoch / 1000, (existing?.generation ?? 0) + 1),
            metageneration: 1, size: size, timeCreated: now, updated: now, md5Hash: md5,
            contentType: a.contentType, contentEncoding: a.contentEncoding, contentDisposition: a.contentDisposition,
            contentLanguage: a.contentLanguage, cacheControl: a.cacheControl, customMetadata: a.customMetadata,
            downloadTokens: a.downloadTokens)
    }

    /// Write options whose `beforeCommit` runs rules `create` (overwrites included, v0 §5.8) for `principal`
    /// against the metadata the backend is about to commit; the backend checks the preconditions after it.
    func commitOptions(_ object: ObjectPath, principal: Principal?, existing: ObjectMetadata?,
                       preconditions: Preconditions, expectedMD5: String?, expectedSize: Int64?,
                       _ context: RequestContext) -> WriteOptions {
        let check: @Sendable (ObjectMetadata) async throws -> Void = { [self] proposed in
            try self.authorize(.create, (object.bucket, object.name), principal: principal, resource: existing,
                               requestResource: proposed, context)
        }
        return WriteOptions(preconditions: preconditions, expectedMD5: expectedMD5, expectedSize: expectedSize,
                            beforeCommit: check)
    }

    /// The attributes with a fresh download token when they carry none and the request asks for one.
    static func withDownloadToken(_ attributes: ObjectAttributes, _ mint: Bool) -> ObjectAttributes {
        guard mint, attributes.downloadTokens.isEmpty else { return attributes }
        var a = attributes
        a.downloadTokens = [SecureRandom.uuidString()]
        return a
    }
}
