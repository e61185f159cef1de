import Crypto
import HTTPServer
import PortcullisCore
import Storage

/// One-shot uploads: media (§5.7) and streamed multipart (§5.8), plus what resumable uploads share with them.
extension V0API {
    /// Fills the upload defaults of §5.8: `application/octet-stream`, `inline`, and one fresh download token
    /// unless the client supplied `firebaseStorageDownloadTokens`.
    func completeAttributes(_ attributes: ObjectAttributes, contentType fallback: String?) -> ObjectAttributes {
        var a = attributes
        if a.contentType == nil { a.contentType = fallback.flatMap { $0.isEmpty ? nil : $0 } ?? "application/octet-stream" }
        if a.contentDisposition == nil { a.contentDisposition = "inline" }
        if a.downloadTokens.isEmpty { a.downloadTokens = [SecureRandom.uuidString()] }
        return a
    }

    /// The object an upload would create, from what is declared before the bytes arrive (for the early rules
    /// check; the authoritative check runs in `beforeCommit` with the true size and hashes).
    static func proposedMetadata(_ object: ObjectPath, _ a: ObjectAttributes, size: Int64, md5: String?,
                                 existing: ObjectMetadata?) -> ObjectMetadata {
        let now = Timestamp.now()
        return ObjectMetadata(
            bucket: object.bucket, name: object.name, generation: max(now.nanosecondsSinceEpoch / 1000,
                                                                      (existing?.generation ?? 0) + 1),
            metageneration: 1, size: size, timeCreated: now, updated: now, md5Hash: md5,
            contentType: a.contentType, contentEncoding: a.contentEncoding, contentDisposition: a.contentDisposition,
            contentLanguage: a.contentLanguage, cacheControl: a.cacheControl, customMetadata: a.customMetadata,
            downloadTokens: a.downloadTokens)
    }

    /// Most custom-metadata values tried as the MD5 by `precheckCreate`; with more keys it defers instead.
    static let maxPrecheckMetadataVariants = 16

    /// The early rules check of an upload, made before any byte is read so a denied upload is refused without
    /// streaming it. It only sees what is declared (size, maybe an `md5Hash`; never the crc32c), so a denial is
    /// final only when it does not hinge on those unknowns: with an unknown size the check is skipped, and the
    /// proposal is re-judged with the hashes absent, with placeholder hashes, with the existing object's hashes
    /// and with each custom-metadata value as the MD5 (rules such as `request.resource.md5Hash ==
    /// request.resource.metadata.md5`). Any variant allowing it defers the decision to `beforeCommit`, which
    /// sees the true size and hashes. Decisions here are not counted in `portcullis_rules_decisions_total`
    /// unless they end the request, so every upload is counted once (by its final decision).
    ///
    /// `sizes` are the possible sizes (empty when unknown; a multipart body's media size depends on whether it
    /// ends with a CRLF).
    func precheckCreate(_ call: V0Call, _ object: ObjectPath, _ attributes: ObjectAttributes, sizes: [Int64],
                        md5: String?, existing: ObjectMetadata?) throws(GatewayError) {
        guard call.principal?.isAdmin != true, let size = sizes.first else { return }
        let base = Self.proposedMetadata(object, attributes, size: size, md5: md5, existing: existing)
        var variants = [base]
        for other in sizes.dropFirst() {
            var resized = base
            resized.size = other
            variants.append(resized)
        }
        var placeholder = base
        placeholder.md5Hash = md5 ?? "AAAAAAAAAAAAAAAAAAAAAA=="
        placeholder.crc32c = "AAAAAA=="
        variants.append(placeholder)
        if let existing {
            var same = base
            same.md5Hash = md5 ?? existing.md5Hash
            same.crc32c = existing.crc32c
            variants.append(same)
        }
        if md5 == nil {
            // Bounded work per request: with many custom keys the early check defers to the final one.
            guard attributes.customMetadata.count <= Self.maxPrecheckMetadataVariants else { return }
            for value in attributes.customMetadata.values {
                var declared = base
                declared.md5Hash = value
                variants.append(declared)
            }
        }
        let authorizer = currentAuthorizer()
        for proposal in variants {
            let decision = authorizer.authorize(AccessRequest(
                method: .create, bucket: object.bucket, path: object.name, principal: call.principal,
                resource: existing, requestResource: proposal, time: .now()))
            if decision.allowed { return }
        }
        try authorize(call, .create, bucket: object.bucket, path: object.name, principal: call.principal,
                      resource: existing, requestResource: base)
    }

    /// Write options whose `beforeCommit` runs rules `create` (overwrites included, §5.8) for `principal`
    /// against the metadata the backend is about to commit.
    func createOptions(_ call: V0Call, _ object: ObjectPath, principal: Principal?, existing: ObjectMetadata?,
                       preconditions: Preconditions, expectedMD5: String?, expectedSize: Int64?) -> WriteOptions {
        let check: @Sendable (ObjectMetadata) async throws -> Void = { [self] proposed in
            try self.authorize(call, .create, bucket: object.bucket, path: object.name, principal: principal,
                               resource: existing, requestResource: proposed)
        }
        return WriteOptions(preconditions: preconditions, expectedMD5: expectedMD5, expectedSize: expectedSize,
                            beforeCommit: check)
    }

    /// Refuses a body the `Content-Length` already shows is too large, before reading it (413), and checks the
    /// resumable size/offset headers on every upload request: a malformed value is 400, a declared size or
    /// offset beyond the ceiling 413 — also on upload kinds that do not use them, so no request carrying
    /// nonsense is silently accepted.
    func checkDeclaredLength(_ call: V0Call, allowance: Int64 = 0) throws(GatewayError) {
        if let length = call.request.body.expectedLength, length > configuration.maxObjectBytes + allowance {
            throw .payloadTooLarge(limit: configuration.maxObjectBytes)
        }
        for name in ["X-Goog-Upload-Header-Content-Length", "X-Goog-Upload-Content-Length", "X-Goog-Upload-Offset"] {
            if let value = try Self.int64Header(call.headers, name), value > configuration.maxObjectBytes {
                throw .payloadTooLarge(limit: configuration.maxObjectBytes)
            }
        }
    }

    func uploadMedia(_ call: V0Call, _ object: ObjectPath) async throws -> HTTPResponse {
        let backend = try backend(object.bucket)
        try checkDeclaredLength(call)
        let preconditions = try queryPreconditions(call)
        var attributes = ObjectAttributes()
        if let contentType = call.headers["Content-Type"] {
            try MetadataJSON.checkHeaderSafe(contentType, "Content-Type")
            attributes.contentType = contentType
        }
        attributes = completeAttributes(attributes, contentType: nil)
        let existing = try await existingMetadata(call, backend, object)
        try precheckCreate(call, object, attributes, sizes: call.request.body.expectedLength.map { [$0] } ?? [],
                           md5: nil, existing: existing)
        let body = LimitedByteStream(call.request.body, limit: configuration.maxObjectBytes)
        let options = createOptions(call, object, principal: call.principal, existing: existing,
                                    preconditions: preconditions, expectedMD5: nil, expectedSize: nil)
        let meta = try await storage(call) {
            try await backend.write(object, body: body, attributes: attributes, options: options)
        }
        return Self.json(MetadataJSON.encode(meta), headers: [("ETag", Self.etag(meta))])
    }

    func uploadMultipart(_ call: V0Call, bucket: String, name objectName: String, boundary: String) async throws
        -> HTTPResponse {
        let backend = try backend(bucket)
        try checkDeclaredLength(call, allowance: Int64(configuration.maxJSONBodyBytes) + 64 * 1024)
        let preconditions = try queryPreconditions(call)
        let reader = MultipartReader(body: call.request.body, boundary: boundary)
        do {
            guard try await reader.nextPartHeaders() != nil else { throw MultipartError.unexpectedPartCount }
            let json = try await reader.collectPart(limit: configuration.maxJSONBodyBytes)
            let fields = try MetadataJSON.decodeUpload(json)
            let object = try V0Router.objectPath(bucket, objectName)
            guard let mediaHeaders = try await reader.nextPartHeaders() else { throw MultipartError.unexpectedPartCount }
            let partType = mediaHeaders.first { HTTPHeaders.equalsIgnoringCase($0.name, "Content-Type") }?.value
            if let partType { try MetadataJSON.checkHeaderSafe(partType, "Content-Type") }
            let attributes = completeAttributes(fields.attributes, contentType: partType)

            let existing = try await existingMetadata(call, backend, object)
            // The media part's size if the body ends the way the SDKs end it (`CRLF--boundary--`), or with one
            // more CRLF after it (curl, most MIME writers).
            var sizes: [Int64] = []
            if let length = call.request.body.expectedLength {
                let estimate = max(0, length - reader.consumedBytes - Int64(boundary.utf8.count + 6))
                sizes = [estimate, max(0, estimate - 2)]
            }
            try precheckCreate(call, object, attributes, sizes: sizes, md5: fields.md5Hash, existing: existing)
            let body = LimitedByteStream(reader.partStream(lastPart: true), limit: configuration.maxObjectBytes)
            let options = createOptions(call, object, principal: call.principal, existing: existing,
                                        preconditions: preconditions, expectedMD5: fields.md5Hash, expectedSize: nil)
            let meta = try await storage(call) {
                try await backend.write(object, body: body, attributes: attributes, options: options)
            }
            return Self.json(MetadataJSON.encode(meta), headers: [("ETag", Self.etag(meta))])
        } catch let error as MultipartError {
            throw GatewayError.badRequest(error.description)
        } catch let error as ByteStreamError {
            throw GatewayError(bodyError: error)
        }
    }
}
