import HTTPServer
import PortcullisCore
import Service

/// `objects.list` and the bucket resources.
extension JSONAPI {
    /// `GET /storage/v1/b/{bucket}/o`: items as full object resources (where the caller may read them),
    /// prefixes, and our sealed `nextPageToken`. `maxResults` above 1000 is served as 1000, as GCS does;
    /// `versions=true` lists every kept generation (noncurrent ones of a bucket with versioning enabled too, each
    /// with `timeDeleted`; name by name, oldest generation first); `projection=full` adds each item's `owner`.
    func list(_ call: JSONCall, bucket: String) async throws -> HTTPResponse {
        var maxResults = StorageService.maxPageSize
        if let text = call.query["maxResults"] {
            guard let value = Int(text), (1...Int(Int32.max)).contains(value) else {
                throw ServiceError.badRequest("Invalid value for maxResults: \(text).")
            }
            maxResults = min(value, StorageService.maxPageSize)
        }
        let query = ListQuery(
            bucket: bucket, prefix: call.query["prefix"] ?? "", delimiter: call.query["delimiter"],
            maxResults: maxResults, pageToken: call.query["pageToken"], startOffset: call.query["startOffset"],
            endOffset: call.query["endOffset"],
            includeTrailingDelimiter: try Self.flag(call, "includeTrailingDelimiter"),
            matchGlob: call.query["matchGlob"], firebaseView: false, includeMetadata: true,
            versions: try Self.flag(call, "versions"))
        let page = try await service.list(query, caller: call.caller, call.context)
        return Self.json(
            JSONResources.objectList(
                page, bucket: bucket, base: baseURL(call), mask: call.fields, fullProjection: call.fullProjection))
    }

    func getBucket(_ call: JSONCall, _ name: String) throws -> HTTPResponse {
        let info = try service.bucketInfo(name, caller: call.caller, call.context)
        return Self.json(JSONResources.bucket(info, base: baseURL(call), mask: call.fields))
    }

    /// `GET /storage/v1/b?project=`: every configured bucket, whatever the project (the gateway has one).
    func listBuckets(_ call: JSONCall) throws -> HTTPResponse {
        let buckets = try service.listBuckets(caller: call.caller, call.context)
        return Self.json(JSONResources.bucketList(buckets, base: baseURL(call), mask: call.fields))
    }
}
