public import PortcullisCore

/// `VersionedStorage` on gs://: the generation is passed through to Cloud Storage, whose bucket decides what it
/// keeps (its own `versioning.enabled`, set outside the gateway). A generation the bucket does not keep is GCS's
/// 404, `.notFound` here.
extension GCSBackend: VersionedStorage {
    public func metadata(of object: ObjectPath, generation: Int64) async throws(StorageError) -> ObjectMetadata {
        try Self.checkAddressable(object.name)
        return try await objectMetadata(object, generation: generation)
    }

    public func read(_ object: ObjectPath, generation: Int64, range: ByteRangeSpec?) async throws(StorageError)
        -> ObjectRead
    {
        try Self.checkAddressable(object.name)
        return try await readObject(object, range: range, generation: generation)
    }

    /// Preconditions are checked here against the generation named and passed to GCS too (emulators may ignore
    /// them). Change events of gs:// buckets are published by the service (no outbox), so `recording` is unused.
    public func deleteGeneration(
        _ object: ObjectPath, generation: Int64, preconditions: Preconditions, recording: ChangeRecorder?
    ) async throws(StorageError) {
        try Self.checkAddressable(object.name)
        let current = try await objectMetadata(object, generation: generation)
        guard preconditions.isSatisfied(by: current) else { throw .preconditionFailed }
        _ = try await sendJSON(
            "DELETE",
            objectURL(object.name, query: [("generation", String(generation))] + Self.preconditionQuery(preconditions)),
            op: "delete", idempotent: true)
    }

    /// Change events of gs:// buckets are published by the service, so `recording` is unused.
    public func updateMetadata(
        _ object: ObjectPath, generation: Int64, patch: MetadataPatch, preconditions: Preconditions,
        recording: ChangeRecorder?
    ) async throws(StorageError) -> ObjectMetadata {
        try await patchObject(object, generation: generation, patch: patch, preconditions: preconditions)
    }

    /// Names are chosen by a flat `versions=true` listing (so names only noncurrent generations hold are found),
    /// each name once; then every generation of each listed name is fetched and ordered oldest first. One extra
    /// request per listed name: a page of versions costs up to `maxResults` + 1 upstream calls.
    public func listVersions(_ request: ListRequest) async throws(StorageError) -> ListPage {
        let base = objectsURL
        var names = request
        names.includeMetadata = false
        var page = try await UpstreamListing.page(
            names,
            fetch: { [self] (from: String, limit: Int) async throws(StorageError) in
                var query = [
                    ("prefix", request.prefix), ("maxResults", String(limit)), ("fields", "items(name),nextPageToken"),
                    ("versions", "true"),
                ]
                if !from.isEmpty { query.append(("startOffset", from)) }
                let (_, _, json) = try await sendJSON("GET", url(base, query), op: "list")
                var entries: [UpstreamListing.Entry] = []
                for item in json?["items"]?.arrayValue ?? [] {
                    guard let name = item["name"]?.stringValue, !name.bytesHasPrefix(GCSBackend.stagingPrefix) else {
                        continue
                    }
                    guard !Array(name.utf8).lexicographicallyPrecedes(Array(from.utf8)) else { continue }
                    // Generations of one name arrive together: the name is fed once.
                    if let last = entries.last, last.name.bytesEqual(name) { continue }
                    entries.append(UpstreamListing.Entry(name: name, metadata: nil))
                }
                return (entries, json?["nextPageToken"]?.stringValue.map { !$0.isEmpty } ?? false)
            })
        var items: [String] = []
        var objects: [ObjectMetadata] = []
        for name in page.items {
            for metadata in try await generations(of: name, base: base, bucket: request.bucket) {
                items.append(name)
                objects.append(metadata)
            }
        }
        page.items = items
        page.objects = objects
        return page
    }

    /// Every generation GCS keeps of `name`, oldest first.
    private func generations(of name: String, base: String, bucket: String) async throws(StorageError)
        -> [ObjectMetadata]
    {
        var found: [ObjectMetadata] = []
        var token: String?
        repeat {
            var query = [("prefix", name), ("versions", "true"), ("maxResults", "1000")]
            if let token { query.append(("pageToken", token)) }
            let (_, _, json) = try await sendJSON("GET", url(base, query), op: "list")
            for item in json?["items"]?.arrayValue ?? [] {
                guard item["name"]?.stringValue?.bytesEqual(name) == true else { continue }
                found.append(try GCSObjectCoding.metadata(from: item, bucket: bucket))
            }
            token = json?["nextPageToken"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        } while token != nil
        return found.sorted { $0.generation < $1.generation }
    }
}
