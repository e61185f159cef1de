import Crypto
import HTTPServer
import PortcullisCore
import Service

/// GetObject, HeadObject, PutObject, CopyObject, DeleteObject.
extension S3Surface {
    func getObject(_ call: S3Call, _ object: ObjectPath) async throws -> HTTPResponse {
        let conditions = try await S3Conditions.read(call, object, service: service)
        guard let conditions else { return try await notModified(call, object) }
        let options = ReadOptions(
            conditions: conditions, range: RequestConditions.range(call.headers), headOnly: call.request.isHead,
            ensureDownloadToken: false, acceptsGzip: true)
        let content: ObjectContent
        switch try await service.read(object, caller: call.caller, options: options, call.context) {
        case .notModified(let meta): return Self.notModified(meta)
        case .content(let c): content = c
        }
        var headers = S3ObjectMapping.responseHeaders(content.metadata)
        try S3ObjectMapping.applyOverrides(call.query, to: &headers)
        return content.httpResponse(headers: headers, record: call.record)
    }

    private func notModified(_ call: S3Call, _ object: ObjectPath) async throws -> HTTPResponse {
        let outcome = try await service.metadata(
            of: object, caller: call.caller, conditions: .none, ensureDownloadToken: false, call.context)
        switch outcome {
        case .current(let meta), .notModified(let meta): return Self.notModified(meta)
        }
    }

    static func notModified(_ meta: ObjectMetadata) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("ETag", S3ObjectMapping.etag(meta))
        headers.add("Last-Modified") { meta.updated.appendHTTPDate(to: &$0) }
        return HTTPResponse(status: 304, headers: headers, body: .empty)
    }

    func putObject(_ call: S3Call, _ object: ObjectPath) async throws -> HTTPResponse {
        let headers = call.headers
        let md5 = try headers["Content-MD5"].map { text throws(S3Error) -> [UInt8] in
            guard let bytes = Base64.decode(text), bytes.count == 16 else {
                throw S3Error(400, "InvalidDigest", "The Content-MD5 you specified was invalid.")
            }
            return bytes
        }
        let crc = try headers["x-amz-checksum-crc32c"].map { text throws(S3Error) -> UInt32 in
            guard let bytes = Base64.decode(text), bytes.count == 4 else {
                throw S3Error(400, "InvalidRequest", "Value for x-amz-checksum-crc32c header is invalid.")
            }
            return bytes.reduce(0) { $0 << 8 | UInt32($1) }
        }
        let body: any ByteStream =
            md5 == nil && crc == nil
            ? call.body : DigestCheckedStream(call.body, sha256: nil, md5: md5, crc32c: crc, verdict: call.verdict)
        var preconditions = Preconditions.none
        if headers["If-None-Match"]?.trimmingSpaces().bytesEqual("*") == true { preconditions.ifGenerationMatch = 0 }
        let upload = UploadRequest(
            object: object, attributes: try S3ObjectMapping.attributes(headers),
            possibleSizes: call.body.expectedLength.map { [$0] } ?? [], expectedMD5: headers["Content-MD5"],
            expectedCRC32C: headers["x-amz-checksum-crc32c"], preconditions: preconditions, mintDownloadToken: false)
        let meta = try await service.upload(upload, body: body, caller: call.caller, call.context)
        var out = HTTPHeaders()
        out.add("ETag", S3ObjectMapping.etag(meta))
        if let crc = meta.crc32c, headers.contains("x-amz-checksum-crc32c") { out.add("x-amz-checksum-crc32c", crc) }
        return HTTPResponse(status: 200, headers: out, body: .empty)
    }

    func deleteObject(_ call: S3Call, _ object: ObjectPath) async throws -> HTTPResponse {
        do {
            try await service.delete(object, conditions: .none, caller: call.caller, call.context)
        } catch  where error.status == 404 {
            // S3 answers 204 for a key that is not there (after access was decided: the service denies first).
        }
        return HTTPResponse(status: 204, headers: HTTPHeaders(), body: .empty)
    }

    /// CopyObject: `x-amz-copy-source: /bucket/key` (percent-encoded), `x-amz-metadata-directive` `COPY`
    /// (default) or `REPLACE`, and the `x-amz-copy-source-if-*` conditions on the source.
    func copyObject(_ call: S3Call, _ destination: ObjectPath) async throws -> HTTPResponse {
        let source = try Self.copySource(call.headers["x-amz-copy-source"] ?? "")
        let sourceConditions = try await S3Conditions.copySource(call, source, service: service)
        var overrides = MetadataPatch()
        let directive = call.headers["x-amz-metadata-directive"]?.uppercased() ?? "COPY"
        switch directive {
        case "COPY": break
        case "REPLACE":
            let attributes = try S3ObjectMapping.attributes(call.headers)
            overrides.contentType = .set(attributes.contentType ?? S3ObjectMapping.defaultContentType)
            for (name, keyPath) in S3ObjectMapping.representationHeaders {
                let value = attributes[keyPath: keyPath]
                let patch: FieldPatch<String> = value.map { .set($0) } ?? .remove
                switch name {
                case "Content-Disposition": overrides.contentDisposition = patch
                case "Content-Encoding": overrides.contentEncoding = patch
                case "Content-Language": overrides.contentLanguage = patch
                default: overrides.cacheControl = patch
                }
            }
            overrides.clearCustomMetadata = true
            for (key, value) in attributes.customMetadata { overrides.customMetadata[exactly: key] = .some(value) }
        default:
            throw S3Error(400, "InvalidArgument", "Unknown metadata directive.")
        }
        if directive == "COPY", source.bucket.bytesEqual(destination.bucket), source.name.bytesEqual(destination.name) {
            throw S3Error(
                400, "InvalidRequest",
                "This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata."
            )
        }
        let meta = try await service.copy(
            CopyRequest(
                source: source, sourceConditions: sourceConditions, destination: destination, overrides: overrides),
            caller: call.caller, call.context)
        var xml = S3XMLWriter(root: "CopyObjectResult")
        xml.element("LastModified", meta.updated.s3XMLTime)
        xml.element("ETag", S3ObjectMapping.etag(meta))
        return Self.xml(xml.finished(root: "CopyObjectResult"))
    }

    /// `bucket/key` or `/bucket/key`, percent-encoded, optionally `?versionId=` (refused: no versions here).
    static func copySource(_ header: String) throws -> ObjectPath {
        var text = Substring(header)
        if text.bytesHasPrefix("/") { text = text.dropFirst() }
        if let mark = text.utf8.firstIndex(of: UInt8(ascii: "?")) {
            throw S3Error.notImplemented("Copying a version (\(text[mark...]))")
        }
        guard let slash = text.utf8.firstIndex(of: UInt8(ascii: "/")), slash != text.startIndex,
            text.utf8.index(after: slash) != text.endIndex
        else { throw S3Error(400, "InvalidArgument", "Copy Source must mention the source bucket and key.") }
        let bucket = try S3Target.decode(text[..<slash])
        // Stepped over as a byte: a `Character` step would take a combining mark after the `/` with it.
        let key = try S3Target.decode(text[text.utf8.index(after: slash)...])
        return try StorageService.objectPath(bucket, key)
    }

    static func xml(_ body: [UInt8], status: Int = 200) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("Content-Type", "application/xml")
        return HTTPResponse(status: status, headers: headers, body: .bytes(body))
    }
}

/// S3's conditional headers, whose validator is the S3 ETag (an MD5), turned into the service's terms: the
/// object's metadata is read (rules `get` first, so a denial still comes before existence), the ETag compared
/// here, and the read or copy then pinned to the generation that was compared, so a concurrent write cannot
/// slip between the check and the bytes.
enum S3Conditions {
    /// The conditions for a GetObject/HeadObject; nil when the answer is 304 Not Modified.
    static func read(_ call: S3Call, _ object: ObjectPath, service: StorageService) async throws -> Conditions? {
        try await check(
            call, object, service: service, ifMatch: call.headers["If-Match"],
            ifNoneMatch: call.headers["If-None-Match"],
            ifModifiedSince: call.headers["If-Modified-Since"], ifUnmodifiedSince: call.headers["If-Unmodified-Since"],
            notModifiedIs304: true)
    }

    /// The source conditions of a CopyObject (`x-amz-copy-source-if-*`): every failure is 412.
    static func copySource(_ call: S3Call, _ object: ObjectPath, service: StorageService) async throws -> Conditions {
        let h = call.headers
        return try await check(
            call, object, service: service, ifMatch: h["x-amz-copy-source-if-match"],
            ifNoneMatch: h["x-amz-copy-source-if-none-match"],
            ifModifiedSince: h["x-amz-copy-source-if-modified-since"],
            ifUnmodifiedSince: h["x-amz-copy-source-if-unmodified-since"], notModifiedIs304: false) ?? .none
    }

    private static func check(
        _ call: S3Call, _ object: ObjectPath, service: StorageService, ifMatch: String?, ifNoneMatch: String?,
        ifModifiedSince: String?, ifUnmodifiedSince: String?, notModifiedIs304: Bool
    ) async throws -> Conditions? {
        guard ifMatch != nil || ifNoneMatch != nil || ifModifiedSince != nil || ifUnmodifiedSince != nil else {
            return Conditions.none
        }
        let outcome = try await service.metadata(
            of: object, caller: call.caller, conditions: .none, ensureDownloadToken: false, call.context)
        guard case .current(let meta) = outcome else { return Conditions.none }
        let etag = S3ObjectMapping.etag(meta)
        let failed = S3Error(412, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold")
        func names(_ list: String) -> Bool {
            list.bytesSplit(separator: UInt8(ascii: ",")).contains { item in
                let tag = item.trimmingSpaces()
                return tag.bytesEqual("*") || tag.bytesEqual(etag) || ("\"" + tag + "\"").bytesEqual(etag)
                    || tag.bytesEqual("W/" + etag)
            }
        }
        let seconds = meta.updated.secondsSinceEpoch
        // S3's order: If-Match decides over If-Unmodified-Since; If-None-Match over If-Modified-Since.
        if let ifMatch {
            guard names(ifMatch) else { throw failed }
        } else if let date = ifUnmodifiedSince.flatMap(HTTPDate.parse), seconds > date.secondsSinceEpoch {
            throw failed
        }
        if let ifNoneMatch {
            if names(ifNoneMatch) {
                if notModifiedIs304 { return nil }
                throw failed
            }
        } else if let date = ifModifiedSince.flatMap(HTTPDate.parse), seconds <= date.secondsSinceEpoch {
            if notModifiedIs304 { return nil }
            throw failed
        }
        return Conditions(generation: Preconditions(ifGenerationMatch: meta.generation))
    }
}
