import Crypto
public import PortcullisCore
import Storage

/// Multipart uploads (S3's): parts uploaded in any order and in parallel, then completed into one object.
///
/// Each upload is staged in the destination's bucket under `multipartPrefix` — a manifest (the destination's
/// name, its attributes and who started it) and one object per part — written straight to the backend, so no
/// rules, events or listings see them, and no surface can name them (`objectPath` refuses the prefix). Nothing
/// is kept in memory between requests: any instance serves any part. Completion concatenates the parts through
/// `upload`, so the rules judge the object as it will be, its change event is published, and the commit is the
/// backend's one atomic write: a crash leaves either the whole object or none. The staged objects are then
/// removed (best effort: an upload that outlives its parts is aborted by the client, or removed by hand).
extension StorageService {
    /// Names under this prefix are the service's own: refused by `objectPath`, hidden from listings.
    public static let multipartPrefix = ".portcullis-multipart/"
    /// S3's smallest part, except the last.
    public static let minimumPartBytes: Int64 = 5 << 20
    public static let maxPartNumber = 10_000

    /// Starts an upload of `request.object`: the rules' early `create` check on the destination, then the
    /// manifest. Returns the upload id.
    public func startMultipart(_ request: UploadRequest, caller: Caller, _ context: RequestContext)
        async throws(ServiceError) -> String
    {
        let bucket = try bucket(request.object.bucket, context)
        let existing = try await existing(request.object, in: bucket, context)
        _ = try admit(request, principal: caller.principal, existing: existing, context)
        let id = HexText.encode(SecureRandom.bytes(16))
        var document = Array(#"{"name":"#.utf8)
        JSONValue.encodeString(request.object.name, into: &document)
        document += Array(#","owner":"#.utf8)
        JSONValue.encodeString(Self.owner(caller), into: &document)
        document.append(UInt8(ascii: "}"))
        let manifest = try Self.stagingPath(bucket.name, id, "manifest")
        _ = try await storage(context, "storage.commit") { () async throws(StorageError) in
            try await bucket.backend.write(
                manifest, body: BufferByteStream(document), attributes: request.attributes, options: WriteOptions())
        }
        return id
    }

    /// Stores part `number` of upload `id` (replacing an earlier upload of the same number).
    public func uploadPart(
        _ upload: MultipartTarget, number: Int, body: any ByteStream, expectedMD5: String?, caller: Caller,
        _ context: RequestContext
    ) async throws(ServiceError) -> ObjectMetadata {
        guard (1...Self.maxPartNumber).contains(number) else {
            body.cancel()
            throw .badRequest("Part number must be an integer between 1 and \(Self.maxPartNumber), inclusive.")
        }
        let bucket: Bucket
        do throws(ServiceError) {
            bucket = try self.bucket(upload.object.bucket, context)
            _ = try await manifest(upload, bucket, caller, context)
        } catch {
            body.cancel()
            throw error
        }
        let part = try Self.stagingPath(bucket.name, upload.id, Self.partName(number))
        let limited = LimitedByteStream(body, limit: configuration.maxObjectBytes)
        return try await storage(context, "storage.commit") { () async throws(StorageError) in
            try await bucket.backend.write(
                part, body: limited, attributes: ObjectAttributes(), options: WriteOptions(expectedMD5: expectedMD5))
        }
    }

    /// Stores part `number` of upload `id` from `source` (bytes `range` of it, or all): rules `get` on the
    /// source first, as a copy judges it, then the bytes streamed from the source's generation that was judged.
    public func uploadPartCopy(
        _ upload: MultipartTarget, number: Int, source: ObjectPath, sourceConditions: Conditions,
        range: ByteRangeSpec?, caller: Caller, _ context: RequestContext
    ) async throws(ServiceError) -> ObjectMetadata {
        let sourceBucket = try bucket(source.bucket, context)
        let current = try await judgeSource(source, sourceConditions, sourceBucket, caller, context)
        let bucket = try bucket(upload.object.bucket, context)
        _ = try await manifest(upload, bucket, caller, context)
        guard (1...Self.maxPartNumber).contains(number) else {
            throw .badRequest("Part number must be an integer between 1 and \(Self.maxPartNumber), inclusive.")
        }
        if let range {
            guard case .fromTo(let first, let last?) = range, first <= last, last < current.size else {
                throw .init(.rangeNotSatisfiable, "The x-amz-copy-source-range is not satisfiable.")
            }
        }
        let read: ObjectRead
        do {
            read = try await storage(context, "storage.read") { () async throws(StorageError) in
                try await sourceBucket.read(source, range: range, nil)
            }
        } catch  where error.status == 404 {
            throw .unavailable("The source object was deleted during the copy; retry.", retryAfter: 1)
        }
        guard read.metadata.generation == current.generation else {
            read.body.discard()
            throw .unavailable("The source object changed during the copy; retry.", retryAfter: 1)
        }
        let part = try Self.stagingPath(bucket.name, upload.id, Self.partName(number))
        let body = read.body.byteStream()
        return try await storage(context, "storage.commit") { () async throws(StorageError) in
            try await bucket.backend.write(part, body: body, attributes: ObjectAttributes(), options: WriteOptions())
        }
    }

    /// The parts stored so far, in part-number order.
    public func listParts(_ upload: MultipartTarget, caller: Caller, _ context: RequestContext)
        async throws(ServiceError) -> [MultipartPart]
    {
        let bucket = try bucket(upload.object.bucket, context)
        _ = try await manifest(upload, bucket, caller, context)
        return try await parts(upload.id, bucket, context)
    }

    /// Concatenates the named parts (ascending numbers, each as stored: `md5` must match the stored part's, and
    /// each but the last at least `minimumPartBytes`) into the destination, through `upload`. `etag` becomes
    /// the object's custom metadata `s3-etag` (S3's multipart ETag, computed from the parts) when
    /// `recordingS3ETag` — the S3 surface answers it for the object from then on; Cloud Storage keeps no such field.
    public func completeMultipart(
        _ upload: MultipartTarget, parts chosen: [(number: Int, md5: [UInt8])], recordingS3ETag: Bool = true,
        caller: Caller, _ context: RequestContext
    ) async throws(ServiceError) -> ObjectMetadata {
        let bucket = try bucket(upload.object.bucket, context)
        var attributes = try await manifest(upload, bucket, caller, context)
        guard !chosen.isEmpty else { throw .badRequest("A multipart upload completes with at least one part.") }
        let stored = try await parts(upload.id, bucket, context)
        var selected: [ObjectMetadata] = []
        var previous = 0
        var md5s: [UInt8] = []
        for (index, part) in chosen.enumerated() {
            guard part.number > previous else { throw MultipartError.invalidPartOrder.serviceError }
            previous = part.number
            guard let found = stored.first(where: { $0.number == part.number }),
                found.md5.elementsEqual(part.md5)
            else { throw MultipartError.invalidPart(part.number).serviceError }
            if index < chosen.count - 1, found.metadata.size < Self.minimumPartBytes {
                throw MultipartError.entityTooSmall.serviceError
            }
            selected.append(found.metadata)
            md5s += found.md5
        }
        if recordingS3ETag {
            attributes.customMetadata[exactly: "s3-etag"] = HexText.encode(MD5.hash(md5s)) + "-\(chosen.count)"
        }
        let total = selected.reduce(Int64(0)) { $0 + $1.size }
        var paths: [ObjectPath] = []
        for part in chosen { paths.append(try Self.stagingPath(bucket.name, upload.id, Self.partName(part.number))) }
        let sources = zip(paths, selected.map(\.generation)).map { ($0, $1) }
        let body = ConcatenatedStream(count: sources.count, length: total) { [self] index throws(ServiceError) in
            try await openSource(sources[index].0, generation: sources[index].1, bucket, context)
        }
        let committed = try await self.upload(
            UploadRequest(
                object: upload.object, attributes: attributes, possibleSizes: [total], mintDownloadToken: false),
            body: body, caller: caller, context)
        await removeStaging(upload.id, bucket, context)
        return committed
    }

    /// Removes the upload's parts and manifest.
    public func abortMultipart(_ upload: MultipartTarget, caller: Caller, _ context: RequestContext)
        async throws(ServiceError)
    {
        let bucket = try bucket(upload.object.bucket, context)
        _ = try await manifest(upload, bucket, caller, context)
        await removeStaging(upload.id, bucket, context)
    }

    /// The caller's unfinished uploads in `bucketName` (every upload for the admin) whose destination starts
    /// with `prefix`, at most `limit`, ordered by destination then id. Another user's uploads are never shown:
    /// their names are not the caller's to learn.
    public func listMultipartUploads(
        _ bucketName: String, prefix: String, limit: Int, caller: Caller, _ context: RequestContext
    ) async throws(ServiceError) -> [MultipartUpload] {
        let bucket = try bucket(bucketName, context)
        var found: [MultipartUpload] = []
        var cursor: String?
        repeat {
            let request = ListRequest(
                bucket: bucket.name, prefix: Self.multipartPrefix, delimiter: "/", maxResults: 1000, cursor: cursor,
                firebaseView: false)
            let page = try await storage(context, "storage.list") { () async throws(StorageError) in
                try await bucket.backend.list(request)
            }
            for folder in page.prefixes {
                let id = String(folder.dropFirst(Self.multipartPrefix.utf8.count).dropLast())
                guard let (name, owner, started) = try? await manifestFacts(id, bucket, context),
                    caller.isAdmin || owner.bytesEqual(Self.owner(caller)), name.bytesHasPrefix(prefix)
                else { continue }
                found.append(MultipartUpload(name: name, id: id, initiated: started))
            }
            cursor = page.nextCursor
        } while cursor != nil
        found.sort {
            $0.name.bytesEqual($1.name)
                ? Array($0.id.utf8).lexicographicallyPrecedes(Array($1.id.utf8))
                : Array($0.name.utf8).lexicographicallyPrecedes(Array($1.name.utf8))
        }
        return Array(found.prefix(limit))
    }

    /// The destination, owner and start time a manifest records.
    private func manifestFacts(_ id: String, _ bucket: Bucket, _ context: RequestContext) async throws
        -> (String, String, Timestamp)
    {
        let path = try Self.stagingPath(bucket.name, id, "manifest")
        let read = try await storage(context, "storage.read") { () async throws(StorageError) in
            try await bucket.read(path, range: nil, nil)
        }
        let bytes = try await read.body.byteStream().collect(limit: 64 << 10)
        let document = try JSONValue.parse(bytes)
        guard let name = document["name"]?.stringValue, let owner = document["owner"]?.stringValue else {
            throw ServiceError.internalError("A multipart manifest is unreadable.")
        }
        return (name, owner, read.metadata.timeCreated)
    }

    // MARK: - Staging

    /// Who may continue an upload: the admin, or the same uid (anonymous uploads only by anonymous callers).
    static func owner(_ caller: Caller) -> String {
        guard let principal = caller.principal else { return "" }
        return principal.isAdmin ? "\u{0}admin" : "u:" + principal.uid
    }

    static func partName(_ number: Int) -> String {
        let digits = String(number)
        return "part-" + String(repeating: "0", count: 5 - digits.utf8.count) + digits
    }

    static func stagingPath(_ bucket: String, _ id: String, _ leaf: String) throws(ServiceError) -> ObjectPath {
        do {
            return try ObjectPath(bucket: bucket, name: multipartPrefix + id + "/" + leaf)
        } catch { throw ServiceError(error) }
    }

    /// The manifest's attributes, after checking the upload exists, names this destination and belongs to the
    /// caller. An unknown id, another destination or another owner are all `NoSuchUpload`: nothing is learned.
    private func manifest(_ upload: MultipartTarget, _ bucket: Bucket, _ caller: Caller, _ context: RequestContext)
        async throws(ServiceError) -> ObjectAttributes
    {
        guard upload.id.utf8.count == 32, upload.id.utf8.allSatisfy({ Self.isLowerHex($0) }) else {
            throw MultipartError.noSuchUpload.serviceError
        }
        let path = try Self.stagingPath(bucket.name, upload.id, "manifest")
        let read: ObjectRead
        do {
            read = try await storage(context, "storage.read") { () async throws(StorageError) in
                try await bucket.read(path, range: nil, nil)
            }
        } catch  where error.status == 404 {
            throw MultipartError.noSuchUpload.serviceError
        }
        let bytes: [UInt8]
        do { bytes = try await read.body.byteStream().collect(limit: 64 << 10) } catch {
            throw .unavailable("The upload's manifest could not be read; retry.", retryAfter: 1)
        }
        guard let document = try? JSONValue.parse(bytes), let name = document["name"]?.stringValue,
            let owner = document["owner"]?.stringValue
        else { throw .internalError("A multipart manifest is unreadable.") }
        guard name.bytesEqual(upload.object.name),
            caller.isAdmin || owner.bytesEqual(Self.owner(caller))
        else { throw MultipartError.noSuchUpload.serviceError }
        // What the start was given, all of it: a copy's attributes leave out the custom time and storage class.
        var attributes = Self.attributes(of: read.metadata)
        attributes.customTime = read.metadata.customTime
        attributes.storageClass = read.metadata.storageClass
        return attributes
    }

    private func parts(_ id: String, _ bucket: Bucket, _ context: RequestContext) async throws(ServiceError)
        -> [MultipartPart]
    {
        var found: [MultipartPart] = []
        var cursor: String?
        let prefix = Self.multipartPrefix + id + "/part-"
        repeat {
            let request = ListRequest(
                bucket: bucket.name, prefix: prefix, delimiter: nil, maxResults: 1000, cursor: cursor,
                firebaseView: false, includeMetadata: true)
            let page = try await storage(context, "storage.list") { () async throws(StorageError) in
                try await bucket.backend.list(request)
            }
            for meta in page.objects {
                guard let number = meta.name.bytesRemovingPrefix(prefix).flatMap({ Int($0) }) else { continue }
                let md5 = meta.md5Hash.flatMap { Base64.decode($0) } ?? []
                found.append(MultipartPart(number: number, md5: md5, metadata: meta))
            }
            cursor = page.nextCursor
        } while cursor != nil
        return found.sorted { $0.number < $1.number }
    }

    private func removeStaging(_ id: String, _ bucket: Bucket, _ context: RequestContext) async {
        await purgeStaged(under: Self.multipartPrefix + id + "/", bucket)
    }

    /// Removes every unfinished upload's staged objects in `bucket` (best effort).
    func removeMultipartStaging(_ bucket: Bucket, _ context: RequestContext) async {
        await purgeStaged(under: Self.multipartPrefix, bucket)
    }

    /// Removes every object under `prefix` for good: on a versioned bucket each kept generation by number, so
    /// staging (a part uploaded twice, a removed manifest) leaves no noncurrent generation behind — none that
    /// no listing shows and that would keep the bucket from being deleted.
    private func purgeStaged(under prefix: String, _ bucket: Bucket) async {
        var cursor: String?
        repeat {
            let request = ListRequest(
                bucket: bucket.name, prefix: prefix, delimiter: nil, maxResults: 1000, cursor: cursor,
                firebaseView: false, includeMetadata: true)
            let page: ListPage
            do {
                if let versioned = bucket.versioned {
                    page = try await versioned.listVersions(request)
                } else {
                    page = try await bucket.backend.list(request)
                }
            } catch { return }
            for object in page.objects {
                guard let path = try? ObjectPath(bucket: bucket.name, name: object.name) else { continue }
                if let versioned = bucket.versioned {
                    try? await versioned.deleteGeneration(
                        path, generation: object.generation, preconditions: .none, recording: nil)
                } else {
                    try? await bucket.backend.delete(path, preconditions: .none)
                }
            }
            cursor = page.nextCursor
        } while cursor != nil
    }

    static func isLowerHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }
}

/// An upload and the object it completes into (the id alone is not enough: a request naming another object
/// with a valid id is `NoSuchUpload`).
public struct MultipartTarget: Sendable {
    public let object: ObjectPath
    public let id: String
    public init(object: ObjectPath, id: String) {
        self.object = object
        self.id = id
    }
}

/// An unfinished upload: its destination's name, its id, when it started.
public struct MultipartUpload: Sendable {
    public let name: String
    public let id: String
    public let initiated: Timestamp
}

/// A stored part: its number, its MD5 (16 bytes) and its staging object's metadata (size, time).
public struct MultipartPart: Sendable {
    public let number: Int
    public let md5: [UInt8]
    public let metadata: ObjectMetadata
}

/// Failures particular to multipart uploads, carried as `ServiceError`s whose `details.multipart` names them
/// so a surface can word them (S3: `NoSuchUpload`, `InvalidPart`, `InvalidPartOrder`, `EntityTooSmall`).
public enum MultipartError: Sendable, Equatable {
    case noSuchUpload
    case invalidPart(Int)
    case invalidPartOrder
    case entityTooSmall

    var serviceError: ServiceError {
        var details = ServiceError.Details()
        details.multipart = self
        switch self {
        case .noSuchUpload:
            return ServiceError(.notFound, "The specified multipart upload does not exist.", details: details)
        case .invalidPart(let number):
            return ServiceError(.badRequest, "Part \(number) was not found or its ETag differs.", details: details)
        case .invalidPartOrder:
            return ServiceError(.badRequest, "The parts must be listed in ascending order.", details: details)
        case .entityTooSmall:
            return ServiceError(
                .badRequest, "Each part but the last must be at least 5 MiB.", details: details)
        }
    }
}
