import HTTPServer
import PortcullisCore
import Service

/// A signed URL for a bucket (`bucket.generate_signed_url()`, path `/{bucket}`): `GET` lists its objects as the
/// XML API's `ListBucketResult`, as the signer may list them under the rules.
///
/// Query: `prefix`, `delimiter`, `max-keys` (1…1000, default 1000) and `marker`. Paging is the gateway's own:
/// `NextMarker` is an opaque sealed cursor (the JSON API's `nextPageToken`), and a `marker` must be one it gave —
/// an object name there is a 400, not a position. Each `Contents` carries `Key`, `Generation`, `MetaGeneration`,
/// `LastModified`, `ETag` and `Size`; a name the signer may list but not read shows its `Key` only.
extension XMLAPISurface {
    func listObjects(_ matched: MatchedRequest) async -> HTTPResponse {
        let record = matched.record
        do {
            let caller: Caller
            switch try checkSigner(matched) {
            case .caller(let signer): caller = signer
            case .refused(let response): return response
            }
            guard let bucketText = matched.match["bucket"],
                let bucket = PercentEncoding.decode(bucketText, plusIsSpace: false)
            else { throw ServiceError.badRequest("Malformed percent-encoding in the path.") }
            record.bucket = bucket
            let query = try QueryParameters(parsing: matched.request.query, singleValued: Self.signingParameters)
            var maxKeys = StorageService.maxPageSize
            if let text = query["max-keys"] {
                guard let value = Int(text), (1...Int(Int32.max)).contains(value) else {
                    throw ServiceError.badRequest("Invalid value for max-keys: \(text).")
                }
                maxKeys = min(value, StorageService.maxPageSize)
            }
            let prefix = query["prefix"] ?? ""
            let delimiter = query["delimiter"]
            let marker = query["marker"].flatMap { $0.isEmpty ? nil : $0 }
            let page = try await service.list(
                ListQuery(
                    bucket: bucket, prefix: prefix, delimiter: delimiter, maxResults: maxKeys, pageToken: marker,
                    firebaseView: false, includeMetadata: true),
                caller: caller, matched.context)
            var xml =
                "<?xml version='1.0' encoding='UTF-8'?><ListBucketResult xmlns='http://doc.s3.amazonaws.com/2006-03-01'>"
                + "<Name>" + MarkupEscaping.escaped(bucket) + "</Name><Prefix>" + MarkupEscaping.escaped(prefix)
                + "</Prefix><Marker>" + MarkupEscaping.escaped(marker ?? "") + "</Marker>"
            if let delimiter { xml += "<Delimiter>" + MarkupEscaping.escaped(delimiter) + "</Delimiter>" }
            xml += "<MaxKeys>\(maxKeys)</MaxKeys><IsTruncated>\(page.nextPageToken != nil)</IsTruncated>"
            if let next = page.nextPageToken { xml += "<NextMarker>" + MarkupEscaping.escaped(next) + "</NextMarker>" }
            for (index, name) in page.items.enumerated() {
                xml += "<Contents><Key>" + MarkupEscaping.escaped(name) + "</Key>"
                if index < page.objects.count, let meta = page.objects[index] {
                    xml +=
                        "<Generation>\(meta.generation)</Generation><MetaGeneration>\(meta.metageneration)"
                        + "</MetaGeneration><LastModified>" + meta.updated.rfc3339Milliseconds
                        + "</LastModified><ETag>" + MarkupEscaping.escaped("\"\(meta.etag)\"") + "</ETag><Size>"
                        + "\(meta.size)</Size>"
                }
                xml += "</Contents>"
            }
            for prefix in page.prefixes {
                xml += "<CommonPrefixes><Prefix>" + MarkupEscaping.escaped(prefix) + "</Prefix></CommonPrefixes>"
            }
            xml += "</ListBucketResult>"
            var headers = HTTPHeaders()
            headers.add("Content-Type", "application/xml; charset=UTF-8")
            let body = Array(xml.utf8)
            return HTTPResponse(
                status: 200, headers: headers, body: matched.request.isHead ? .empty : .bytes(body))
        } catch {
            return failureResponse(for: error, record: record, logger: logger)
        }
    }
}
