import Crypto
import PortcullisCore
import Rules
import Storage

/// The rules check of an upload, twice: early, at the request head, with what is declared; and finally,
/// just before commit, with the true size and hashes.
extension StorageService {
    /// What the early check concluded.
    enum Admission: Equatable {
        /// Allowed whatever the body turns out to be (admin, or rules that allow every size and hash): the
        /// preconditions may be answered now.
        case allowed
        /// The rules' answer hinges on what the body will be (its size, its hashes); the check at commit
        /// decides. Nothing about the object (not even whether a precondition holds) may be revealed before.
        case pending
    }

    /// The early rules check, made at the request head before any byte is read, so a denied upload is refused
    /// without storing its body. It judges the declared proposal with the fields that are not known yet —
    /// the size when the client did not declare it, the MD5 unless declared, always the CRC32C — as unknowns
    /// (`RulesRequest.unknownFields`): a denial that holds whatever they turn out to be is final here (403,
    /// counted); an allowance that holds whatever they are is `.allowed`; anything else defers to the check at
    /// commit, which sees the true values. Allowances are counted at commit, so every upload is counted once.
    func admit(
        _ request: UploadRequest, principal: Principal?, existing: ObjectMetadata?,
        _ context: RequestContext
    ) throws(ServiceError) -> Admission {
        if principal?.isAdmin == true {
            context.record.decision = .admin
            return .allowed
        }
        let object = request.object
        var unknown: UnknownFields = []
        if request.expectedMD5 == nil { unknown.insert(.md5Hash) }
        if request.expectedCRC32C == nil { unknown.insert(.crc32c) }
        let sizes: [Int64?] = request.possibleSizes.isEmpty ? [nil] : request.possibleSizes
        let now = Timestamp.now()
        var allowedForCertain = true
        var deniedForCertain = true
        for size in sizes {
            var judged = RulesRequest(
                method: .create, bucket: object.bucket, path: object.name, auth: principal, time: now,
                resource: existing,
                requestResource: Self.proposal(
                    object, request.attributes, size: size ?? 0, md5: request.expectedMD5,
                    crc32c: request.expectedCRC32C, existing: existing))
            judged.unknownFields = size == nil ? unknown.union(.size) : unknown
            let decision = judge(judged)
            if !decision.allowed { allowedForCertain = false }
            if !decision.deniedForCertain { deniedForCertain = false }
        }
        if deniedForCertain {
            decisions.count(.create, allowed: false)
            context.record.decision = .deny
            throw .denied(.create)
        }
        if allowedForCertain {
            context.record.decision = .allow
            return .allowed
        }
        return .pending
    }

    /// The object an upload would create, from what is declared before the bytes arrive.
    static func proposal(
        _ object: ObjectPath, _ a: ObjectAttributes, size: Int64, md5: String?, crc32c: String?,
        existing: ObjectMetadata?
    ) -> ObjectMetadata {
        let now = Timestamp.now()
        return ObjectMetadata(
            bucket: object.bucket, name: object.name,
            generation: max(now.nanosecondsSinceEpoch / 1000, (existing?.generation ?? 0) + 1),
            metageneration: 1, size: size, timeCreated: now, updated: now, md5Hash: md5, crc32c: crc32c,
            storageClass: a.storageClass ?? "STANDARD", contentType: a.contentType, contentEncoding: a.contentEncoding,
            contentDisposition: a.contentDisposition,
            contentLanguage: a.contentLanguage, cacheControl: a.cacheControl, customMetadata: a.customMetadata,
            downloadTokens: a.downloadTokens, customTime: a.customTime)
    }

    /// Write options whose `beforeCommit` runs rules `create` (overwrites included, README.md "How the rules decide") for `principal`
    /// against the metadata the backend is about to commit; the backend checks the preconditions after it.
    func commitOptions(
        _ object: ObjectPath, principal: Principal?, existing: ObjectMetadata?,
        preconditions: Preconditions, expectedMD5: String?, expectedCRC32C: String?, expectedSize: Int64?,
        _ context: RequestContext
    ) -> WriteOptions {
        let check: @Sendable (ObjectMetadata) async throws -> Void = { [self] proposed in
            try self.authorize(
                .create, (object.bucket, object.name), principal: principal, resource: existing,
                requestResource: proposed, context)
        }
        return WriteOptions(
            preconditions: preconditions, expectedMD5: expectedMD5, expectedCRC32C: expectedCRC32C,
            expectedSize: expectedSize,
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
