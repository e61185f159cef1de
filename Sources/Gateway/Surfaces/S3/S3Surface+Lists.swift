import Crypto
import HTTPServer
import PortcullisCore
import Service
public import Storage

/// ListBuckets, HeadBucket, GetBucketLocation, ListObjectsV2, ListObjects (v1), DeleteObjects.
extension S3Surface {
    func listBuckets(_ call: S3Call) throws -> HTTPResponse {
        let buckets = try service.listBuckets(caller: call.caller, call.context)
        var xml = S3XMLWriter(root: "ListAllMyBucketsResult")
        xml.open("Owner")
        xml.element("ID", call.caller.principal?.uid ?? "anonymous")
        xml.element("DisplayName", call.caller.principal?.uid ?? "anonymous")
        xml.close("Owner")
        xml.open("Buckets")
        for bucket in buckets {
            xml.open("Bucket")
            xml.element("Name", bucket.name)
            xml.element("CreationDate", (bucket.timeCreated ?? Timestamp(nanosecondsSinceEpoch: 0)).s3XMLTime)
            xml.close("Bucket")
        }
        xml.close("Buckets")
        return Self.xml(xml.finished(root: "ListAllMyBucketsResult"))
    }

    /// A bucket that exists answers 200 (its existence is not a secret: every object URL names it).
    func headBucket(_ call: S3Call, _ bucket: String) throws -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("x-amz-bucket-region", configuration.region)
        return HTTPResponse(status: 200, headers: headers, body: .empty)
    }

    /// `--s3-region`; `us-east-1` is written as an empty constraint, as S3 does.
    func location(_ call: S3Call) throws -> HTTPResponse {
        let region = configuration.region.bytesEqual("us-east-1") ? "" : configuration.region
        let body =
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            + "<LocationConstraint xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
            + MarkupEscaping.escaped(region) + "</LocationConstraint>"
        return Self.xml(Array(body.utf8))
    }

    /// `max-keys`: 1000 by default and at most; 0 answers an empty page.
    private func maxKeys(_ call: S3Call) throws -> Int {
        guard let text = call.query["max-keys"] else { return StorageService.maxPageSize }
        guard let value = Int(text), value >= 0 else {
            throw S3Error(400, "InvalidArgument", "max-keys must be a non-negative integer.")
        }
        return min(value, StorageService.maxPageSize)
    }

    /// `encoding-type=url`: names percent-encoded (`/` kept), so keys with characters XML cannot carry survive.
    private func encoder(_ call: S3Call) throws -> (String) -> String {
        guard let type = call.query["encoding-type"] else { return { $0 } }
        guard type.bytesEqual("url") else {
            throw S3Error(400, "InvalidArgument", "Invalid Encoding Method specified in Request")
        }
        return { PercentEncoding.unreservedAndSlash.encode($0) }
    }

    /// One page from the service: the rules' `list` judged on the prefix's folder, names shown as stored
    /// (S3 has no Firebase view: `dir/` markers and `a//b` are listed).
    private func page(
        _ call: S3Call, _ bucket: String, limit: Int, token: String?, startAfter: String?
    ) async throws -> ListResult {
        let query = ListQuery(
            bucket: bucket, prefix: call.query["prefix"] ?? "",
            delimiter: call.query["delimiter"].flatMap { $0.isEmpty ? nil : $0 },
            maxResults: limit, pageToken: token,
            // Exclusive start: the smallest name after `startAfter` is `startAfter` + U+0000.
            startOffset: startAfter.flatMap { $0.isEmpty ? nil : $0 + "\u{0}" },
            firebaseView: false, includeMetadata: true)
        return try await service.list(query, caller: call.caller, call.context)
    }

    func listV2(_ call: S3Call, _ bucket: String) async throws -> HTTPResponse {
        let limit = try maxKeys(call)
        let encode = try encoder(call)
        let token = call.query["continuation-token"]
        let startAfter = call.query["start-after"]
        let result: ListResult? =
            limit == 0 ? nil : try await page(call, bucket, limit: limit, token: token, startAfter: startAfter)
        var xml = S3XMLWriter(root: "ListBucketResult")
        xml.element("Name", bucket)
        xml.element("Prefix", encode(call.query["prefix"] ?? ""))
        if let delimiter = call.query["delimiter"] { xml.element("Delimiter", encode(delimiter)) }
        xml.element("MaxKeys", Int64(limit))
        if call.query["encoding-type"] != nil { xml.element("EncodingType", "url") }
        xml.element("KeyCount", Int64((result?.items.count ?? 0) + (result?.prefixes.count ?? 0)))
        if let token { xml.element("ContinuationToken", token) }
        if let startAfter { xml.element("StartAfter", encode(startAfter)) }
        xml.element("IsTruncated", result?.nextPageToken != nil)
        if let next = result?.nextPageToken { xml.element("NextContinuationToken", next) }
        if let result { Self.entries(result, encode, into: &xml) }
        return Self.xml(xml.finished(root: "ListBucketResult"))
    }

    /// ListObjects (v1): `marker` is a name (exclusive start); a truncated page names its `NextMarker` — the
    /// last key or common prefix. After a common prefix, the next page starts past every name under it.
    func listV1(_ call: S3Call, _ bucket: String) async throws -> HTTPResponse {
        let limit = try maxKeys(call)
        let encode = try encoder(call)
        let marker = call.query["marker"]
        var start = marker
        if let marker, let delimiter = call.query["delimiter"], !delimiter.isEmpty, marker.bytesHasSuffix(delimiter) {
            start = marker + "\u{10FFFF}"
        }
        let result: ListResult? =
            limit == 0 ? nil : try await page(call, bucket, limit: limit, token: nil, startAfter: start)
        var xml = S3XMLWriter(root: "ListBucketResult")
        xml.element("Name", bucket)
        xml.element("Prefix", encode(call.query["prefix"] ?? ""))
        xml.element("Marker", encode(marker ?? ""))
        if let delimiter = call.query["delimiter"] { xml.element("Delimiter", encode(delimiter)) }
        xml.element("MaxKeys", Int64(limit))
        if call.query["encoding-type"] != nil { xml.element("EncodingType", "url") }
        let truncated = result?.nextPageToken != nil
        xml.element("IsTruncated", truncated)
        if truncated, let result {
            let lastKey = result.items.last ?? ""
            let lastPrefix = result.prefixes.max { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) } ?? ""
            let next = Array(lastKey.utf8).lexicographicallyPrecedes(Array(lastPrefix.utf8)) ? lastPrefix : lastKey
            xml.element("NextMarker", encode(next))
        }
        if let result { Self.entries(result, encode, into: &xml) }
        return Self.xml(xml.finished(root: "ListBucketResult"))
    }

    private static func entries(_ result: ListResult, _ encode: (String) -> String, into xml: inout S3XMLWriter) {
        for (index, name) in result.items.enumerated() {
            xml.open("Contents")
            xml.element("Key", encode(name))
            if index < result.objects.count, let meta = result.objects[index] {
                xml.element("LastModified", meta.updated.s3XMLTime)
                xml.element("ETag", S3ObjectMapping.etag(meta))
                xml.element("Size", meta.size)
            } else {
                xml.element("Size", Int64(0))
            }
            xml.element("StorageClass", "STANDARD")
            xml.close("Contents")
        }
        for prefix in result.prefixes {
            xml.open("CommonPrefixes")
            xml.element("Prefix", encode(prefix))
            xml.close("CommonPrefixes")
        }
    }

    /// DeleteObjects: `<Delete><Quiet>…</Quiet><Object><Key>…</Key></Object>…</Delete>`, at most 1000 keys;
    /// each key is deleted as its own DeleteObject would be (rules `delete` judged per key), and answered per key.
    func deleteObjects(_ call: S3Call, _ bucket: String) async throws -> HTTPResponse {
        let document: [UInt8]
        do {
            document = try await call.body.collect(limit: 2 << 20)
        } catch {
            if let recorded = call.verdict.recorded { throw recorded }
            throw S3Error(400, "MalformedXML", "The XML you provided was not well-formed or did not validate.")
        }
        if let text = call.headers["Content-MD5"] {
            guard let expected = Base64.decode(text), expected.count == 16 else {
                throw S3Error(400, "InvalidDigest", "The Content-MD5 you specified was invalid.")
            }
            guard MD5.hash(document).elementsEqual(expected) else {
                throw S3Error(400, "BadDigest", "The Content-MD5 you specified did not match what we received.")
            }
        }
        let root: XMLReader.Element
        do { root = try XMLReader.parse(document) } catch { throw S3Error.malformedXML }
        guard root.name.bytesEqual("Delete") else { throw S3Error.malformedXML }
        let quiet = root.children.first { $0.name.bytesEqual("Quiet") }?.text.lowercased().bytesEqual("true") == true
        let keys = try root.children.filter { $0.name.bytesEqual("Object") }.map { object throws(S3Error) -> String in
            guard let key = object.children.first(where: { $0.name.bytesEqual("Key") })?.text, !key.isEmpty else {
                throw S3Error.malformedXML
            }
            return key
        }
        guard (1...1000).contains(keys.count) else { throw S3Error.malformedXML }
        var xml = S3XMLWriter(root: "DeleteResult")
        for key in keys {
            do {
                let object = try StorageService.objectPath(bucket, key)
                do {
                    try await service.delete(object, conditions: .none, caller: call.caller, call.context)
                } catch  where error.status == 404 {}
                if !quiet {
                    xml.open("Deleted")
                    xml.element("Key", key)
                    xml.close("Deleted")
                }
            } catch {
                let s3 = S3ErrorShape.s3Error(ServiceError(any: error))
                xml.open("Error")
                xml.element("Key", key)
                xml.element("Code", s3.code)
                xml.element("Message", s3.message)
                xml.close("Error")
            }
        }
        return Self.xml(xml.finished(root: "DeleteResult"))
    }
}
