import Crypto
public import PortcullisCore
import Upstream

/// Writes: one PutObject for bodies up to one part, else a multipart upload into a hidden staging key that is
/// server-side copied onto the object's key once every byte is in, checked and accepted by `beforeCommit`.
///
/// Why the detour through a staging key: S3 fixes an object's metadata when the upload starts, but our
/// `md5Hash`/`crc32c` (`x-amz-meta-portcullis-md5`/`-crc32c`; S3's multipart ETag is not an MD5) are only known
/// after the last byte, and `beforeCommit` must judge them before anything becomes visible. So the parts go to
/// `.portcullis-staging/w/<random>` (never listed, never readable through the gateway), and the object appears
/// at its key in one step: a CopyObject (or, above `maxSingleCopyBytes`, a multipart UploadPartCopy) with
/// `x-amz-metadata-directive: REPLACE` carrying the complete metadata. Every failure aborts the multipart upload
/// and deletes the staging key; nothing is half-visible. Memory: one part (`partBytes`) per write.
extension S3Backend {
    public func write(
        _ object: ObjectPath, body: any ByteStream, attributes: ObjectAttributes,
        options: WriteOptions
    ) async throws(StorageError) -> ObjectMetadata {
        guard !Self.isHidden(object.name) else {
            body.cancel()
            throw .invalidArgument("object names under \(Self.stagingPrefix) are reserved by the gateway")
        }
        let current: ObjectMetadata? = nil
        var reader = PartReader(body: body, partBytes: configuration.partBytes)
        let first = try await reader.next()
        if first.last {
            let sums = reader.checksum.finish()
            let metadata = try await prepare(
                object, sums: sums, attributes: attributes, options: options, current: current)
            var headers = headers(for: metadata)
            headers.append(("Content-MD5", sums.md5Base64))
            // Create-only: the engine refuses the PUT if the key appeared since the check (412), so two racing
            // creators cannot both succeed. Multipart writes commit with CopyObject, which has no such condition.
            // Not retried then: a retry of a PUT that did land would be refused by its own object.
            let createOnly = options.preconditions.ifGenerationMatch == 0
            if createOnly { headers.append(("If-None-Match", "*")) }
            _ = try await exchange(
                "PUT", url(object.name), headers: headers, body: first.bytes, op: "put", idempotent: !createOnly)
            return metadata
        }
        let staging = Self.stagingPrefix + "w/" + Self.randomID()
        try await multipartUpload(to: staging, first: first.bytes, reader: &reader)
        do {
            let sums = reader.checksum.finish()
            let metadata = try await prepare(
                object, sums: sums, attributes: attributes, options: options,
                current: current)
            try await copy(from: staging, to: object.name, size: sums.size, headers: headers(for: metadata))
            await cleanUp { [self] () async throws(StorageError) in try await deleteKey(staging) }
            return metadata
        } catch {
            await cleanUp { [self] () async throws(StorageError) in try await deleteKey(staging) }
            throw error
        }
    }

    /// The checks every write makes once its bytes are in: declared size and MD5, the preconditions again
    /// (the body may have taken long; S3 has no conditional commit we can rely on, so this narrows the race to
    /// one round trip), then the metadata it will have (microsecond precision: what the metadata headers store)
    /// and `beforeCommit`.
    func prepare(
        _ object: ObjectPath, sums: ObjectChecksums, attributes: ObjectAttributes, options: WriteOptions,
        current: ObjectMetadata?
    ) async throws(StorageError) -> ObjectMetadata {
        try options.verify(size: sums.size, md5Base64: sums.md5Base64, crc32cBase64: sums.crc32cBase64)
        var current = current
        if options.preconditions != .none {
            do { current = try await metadata(of: object) } catch .notFound { current = nil }
        }
        let now = Timestamp(nanosecondsSinceEpoch: Timestamp.now().nanosecondsSinceEpoch / 1000 * 1000)
        var generation = now.nanosecondsSinceEpoch / 1000
        if let current, generation <= current.generation { generation = current.generation + 1 }
        let metadata = ObjectMetadata(
            bucket: object.bucket, name: object.name, generation: generation, size: sums.size, timeCreated: now,
            updated: now, md5Hash: sums.md5Base64, crc32c: sums.crc32cBase64, contentType: attributes.contentType,
            contentEncoding: attributes.contentEncoding, contentDisposition: attributes.contentDisposition,
            contentLanguage: attributes.contentLanguage, cacheControl: attributes.cacheControl,
            customMetadata: attributes.customMetadata, downloadTokens: attributes.downloadTokens)
        if let beforeCommit = options.beforeCommit {
            do { try await beforeCommit(metadata) } catch { throw .rejected(error) }
        }
        // After `beforeCommit`: a caller it refuses never learns whether the preconditions held.
        guard options.preconditions.isSatisfied(by: current) else { throw .preconditionFailed }
        return metadata
    }

    /// Uploads `first` and the rest of `reader` as the parts of a multipart upload completed at `key`; aborts
    /// the upload on any failure.
    func multipartUpload(to key: String, first: [UInt8], reader: inout PartReader) async throws(StorageError) {
        let uploadID = try await createMultipartUpload(key, headers: [("Content-Type", "application/octet-stream")])
        do {
            var etags = [String]()
            var part = (bytes: first, last: false)
            while true {
                etags.append(try await uploadPart(key, uploadID: uploadID, number: etags.count + 1, bytes: part.bytes))
                if part.last { break }
                part = try await reader.next()
            }
            try await completeMultipartUpload(key, uploadID: uploadID, etags: etags)
        } catch {
            await cleanUp { [self] () async throws(StorageError) in
                try await abortMultipartUpload(key, uploadID: uploadID)
            }
            throw error
        }
    }

    /// Server-side copy of `source` onto `key` with `headers` as the complete new metadata: one CopyObject up
    /// to `maxSingleCopyBytes` (S3's limit is 5 GiB), a multipart UploadPartCopy above.
    func copy(
        from source: String, to key: String, size: Int64, headers: [(String, String)],
        sourceETag: String? = nil
    ) async throws(StorageError) {
        let sourceHeader = configuration.bucket + "/" + PercentEncoding.unreservedAndSlash.encode(source)
        if size <= configuration.maxSingleCopyBytes {
            var all = headers
            all.append(("x-amz-copy-source", sourceHeader))
            all.append(("x-amz-metadata-directive", "REPLACE"))
            if let sourceETag {
                all.append(("x-amz-copy-source-if-match", sourceETag))
                // Ceph RGW (16.2) ignores the header above on CopyObject and reads only this spelling.
                all.append(("x-amz-copy-if-match", sourceETag))
            }
            let (_, body) = try await exchange("PUT", url(key), headers: all, op: "copy", idempotent: true)
            try Self.checkResult(body)  // CopyObject may fail after its 200 head
            return
        }
        let uploadID = try await createMultipartUpload(key, headers: headers)
        do throws(StorageError) {
            // At most 10,000 parts.
            let partSize = max(Int64(configuration.partBytes), (size + 9_999) / 10_000)
            var etags = [String]()
            var offset: Int64 = 0
            while offset < size {
                let last = min(size, offset + partSize) - 1
                var partHeaders = [
                    ("x-amz-copy-source", sourceHeader), ("x-amz-copy-source-range", "bytes=\(offset)-\(last)"),
                ]
                if let sourceETag { partHeaders.append(("x-amz-copy-source-if-match", sourceETag)) }
                let (_, body) = try await exchange(
                    "PUT", url(key, query: [("partNumber", String(etags.count + 1)), ("uploadId", uploadID)]),
                    headers: partHeaders, op: "copy_part", idempotent: true)
                guard let etag = try Self.checkResult(body).resultETag else {
                    throw StorageError.internalError("S3 UploadPartCopy answered without an ETag")
                }
                etags.append(etag)
                offset = last + 1
            }
            try await completeMultipartUpload(key, uploadID: uploadID, etags: etags)
        } catch {
            await cleanUp { [self] () async throws(StorageError) in
                try await abortMultipartUpload(key, uploadID: uploadID)
            }
            throw error
        }
    }

    // MARK: multipart primitives

    func createMultipartUpload(_ key: String, headers: [(String, String)]) async throws(StorageError) -> String {
        let (_, body) = try await exchange(
            "POST", url(key, query: [("uploads", "")]), headers: headers,
            op: "multipart_create", idempotent: false)
        guard let uploadID = try S3XMLDocument.parse(body).uploadID, !uploadID.isEmpty else {
            throw .internalError("S3 opened no multipart upload")
        }
        return uploadID
    }

    /// Sends one part (in memory, so signed and retryable); returns its ETag.
    func uploadPart(_ key: String, uploadID: String, number: Int, bytes: [UInt8]) async throws(StorageError) -> String {
        let (headers, _) = try await exchange(
            "PUT", url(key, query: [("partNumber", String(number)), ("uploadId", uploadID)]), body: bytes,
            op: "multipart_part", idempotent: true)
        guard let etag = headers.first(ignoringCase: "etag"), !etag.isEmpty else {
            throw .internalError("S3 stored part \(number) without an ETag")
        }
        return etag
    }

    func completeMultipartUpload(_ key: String, uploadID: String, etags: [String]) async throws(StorageError) {
        var xml = "<CompleteMultipartUpload>"
        for (index, etag) in etags.enumerated() {
            xml += "<Part><PartNumber>\(index + 1)</PartNumber><ETag>\(MarkupEscaping.escaped(etag))</ETag></Part>"
        }
        xml += "</CompleteMultipartUpload>"
        let (_, body) = try await exchange(
            "POST", url(key, query: [("uploadId", uploadID)]),
            headers: [("Content-Type", "application/xml")], body: Array(xml.utf8),
            op: "multipart_complete", idempotent: false)
        try Self.checkResult(body)  // an error may follow a 200 head
    }

    func abortMultipartUpload(_ key: String, uploadID: String) async throws(StorageError) {
        _ = try await exchange(
            "DELETE", url(key, query: [("uploadId", uploadID)]), op: "multipart_abort",
            idempotent: true)
    }

    func deleteKey(_ key: String) async throws(StorageError) {
        do { _ = try await exchange("DELETE", url(key), op: "delete", idempotent: true) } catch .notFound {}
    }

    /// Runs clean-up work to its end even when the calling task was cancelled (an aborted write must not leave
    /// a multipart upload or staging key behind); failures are ignored (best effort).
    func cleanUp(_ work: @escaping @Sendable () async throws(StorageError) -> Void) async {
        await Task { try? await work() }.value
    }

    /// Parses a 2xx answer's XML and throws the `<Error>` it may carry.
    @discardableResult
    static func checkResult(_ body: [UInt8]) throws(StorageError) -> S3XMLDocument {
        let document = try S3XMLDocument.parse(body)
        if document.errorCode != nil { throw map(status: 500, headers: [], body: body) }
        return document
    }

    static func randomID() -> String { SecureRandom.bytes(16).map { String(format2: $0) }.joined() }
}

/// Cuts a body into parts of exactly `partBytes` (the last one shorter), one part in memory at a time, and
/// checksums every byte as it passes.
struct PartReader {
    let body: any ByteStream
    let partBytes: Int
    var checksum = BodyChecksum()
    private var lookahead: [UInt8]?
    private var ended = false

    init(body: any ByteStream, partBytes: Int) {
        self.body = body
        self.partBytes = partBytes
    }

    /// The next part and whether it is the last (a full part is followed by a one-chunk peek to know).
    mutating func next() async throws(StorageError) -> (bytes: [UInt8], last: Bool) {
        var part = lookahead ?? []
        lookahead = nil
        // Reserve what is coming, not a whole part for every small body.
        part.reserveCapacity(min(partBytes, body.expectedLength.map { Int(clamping: $0) + 1 } ?? 256 * 1024))
        while part.count < partBytes, !ended {
            if let chunk = try await read(min(256 * 1024, partBytes - part.count)) {
                part.append(contentsOf: chunk)
            } else {
                ended = true
            }
        }
        if !ended {
            if let chunk = try await read(256 * 1024) { lookahead = chunk } else { ended = true }
        }
        return (part, ended && lookahead == nil)
    }

    private mutating func read(_ maxLength: Int) async throws(StorageError) -> [UInt8]? {
        let chunk: [UInt8]?
        do { chunk = try await body.next(maxLength: maxLength) } catch { throw .bodyFailed(error) }
        if let chunk { checksum.update(chunk) }
        return chunk
    }
}
