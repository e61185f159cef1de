public import Foundation
public import PortcullisCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A pointer to an object or folder in a bucket, with the Firebase Storage operations on it.
public struct StorageReference: Sendable, Hashable, CustomStringConvertible {
    public let storage: Storage
    let path: StoragePath

    init(storage: Storage, path: StoragePath) {
        self.storage = storage
        self.path = path
    }

    public static func == (a: StorageReference, b: StorageReference) -> Bool {
        a.storage === b.storage && a.path == b.path
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(path) }

    public var bucket: String { path.bucket }
    /// The object path without a leading slash (`""` for the root).
    public var fullPath: String { path.object }
    /// The last path component.
    public var name: String { path.object.bytesSplit(separator: UInt8(ascii: "/")).last ?? "" }
    public var description: String { "gs://\(bucket)/\(fullPath)" }

    public func child(_ relative: String) -> StorageReference {
        StorageReference(storage: storage, path: StoragePath(bucket: bucket, object: fullPath + "/" + relative))
    }

    /// nil at the root.
    public func parent() -> StorageReference? {
        guard !fullPath.isEmpty else { return nil }
        let parts = fullPath.bytesSplit(separator: UInt8(ascii: "/")).dropLast()
        return StorageReference(
            storage: storage, path: StoragePath(bucket: bucket, object: parts.joined(separator: "/")))
    }

    public func root() -> StorageReference {
        StorageReference(storage: storage, path: StoragePath(bucket: bucket, object: ""))
    }

    // MARK: Metadata

    public func getMetadata() async throws(StorageError) -> StorageMetadata {
        try Self.decodeMetadata(try await metadataDocument())
    }

    /// The object's metadata resource as the server sent it, every field included (`StorageMetadata` keeps
    /// the ones the SDKs model). For tools that pass the document on, such as `portcullis-cli stat --json`.
    public func getMetadataJSON() async throws(StorageError) -> JSONValue {
        let data = try await metadataDocument()
        do { return try JSONValue.parse(Array(data)) } catch {
            throw StorageError(.unknown, "Invalid metadata returned from the server.")
        }
    }

    private func metadataDocument() async throws(StorageError) -> Data {
        let request = try await storage.request("GET", storage.url(for: path))
        return try await storage.perform(request).1
    }

    /// Sends what changed in `metadata` since it was read (fields set to nil are deleted; custom metadata is
    /// diffed per key) and returns the server's new metadata.
    public func updateMetadata(_ metadata: StorageMetadata) async throws(StorageError) -> StorageMetadata {
        let body = Data(metadata.patchJSON().encoded().utf8)
        let request = try await storage.request(
            "PATCH", storage.url(for: path),
            headers: ["Content-Type": "application/json; charset=utf-8"], body: body)
        let (_, data) = try await storage.perform(request)
        return try Self.decodeMetadata(data)
    }

    public func delete() async throws(StorageError) {
        let request = try await storage.request("DELETE", storage.url(for: path))
        _ = try await storage.perform(request, successCodes: [200, 204])
    }

    // MARK: Listing

    /// One page of at most `maxResults` (1…1000) entries.
    public func list(maxResults: Int, pageToken: String? = nil) async throws(StorageError) -> StorageListResult {
        guard (1...1000).contains(maxResults) else {
            throw StorageError(.invalidArgument, "Argument 'maxResults' must be between 1 and 1000 inclusive.")
        }
        return try await listPage(maxResults: maxResults, pageToken: pageToken)
    }

    /// Every item and prefix under this folder, following page tokens.
    public func listAll() async throws(StorageError) -> StorageListResult {
        var items: [StorageReference] = [], prefixes: [StorageReference] = []
        var token: String? = nil
        repeat {
            let page = try await listPage(maxResults: nil, pageToken: token)
            items += page.items
            prefixes += page.prefixes
            token = page.pageToken
        } while token != nil
        return StorageListResult(prefixes: prefixes, items: items, pageToken: nil)
    }

    private func listPage(maxResults: Int?, pageToken: String?) async throws(StorageError) -> StorageListResult {
        var query: [(String, String)] = [("prefix", fullPath.isEmpty ? "" : fullPath + "/"), ("delimiter", "/")]
        if let maxResults { query.append(("maxResults", String(maxResults))) }
        if let pageToken, !pageToken.isEmpty { query.append(("pageToken", pageToken)) }
        let request = try await storage.request("GET", storage.url(for: root().path, query: query))
        let (_, data) = try await storage.perform(request)
        guard let json = try? JSONValue.parse(Array(data)) else {
            throw StorageError(.unknown, "Invalid list result from the server.")
        }
        let root = self.root()
        let prefixes = (json["prefixes"]?.arrayValue ?? []).compactMap(\.stringValue).map { root.child($0) }
        let items = (json["items"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }.map { root.child($0) }
        return StorageListResult(prefixes: prefixes, items: items, pageToken: json["nextPageToken"]?.stringValue)
    }

    // MARK: Downloads

    /// The object's bytes, failing with `downloadSizeExceeded` as soon as `Content-Length` or the running
    /// count passes `maxSize` — never buffering beyond it.
    public func getData(maxSize: Int64) async throws(StorageError) -> Data {
        let request = try await storage.request("GET", storage.url(for: path, query: [("alt", "media")]))
        let buffer = BoundedBuffer(limit: maxSize)
        do {
            let response = try await StreamingCall.run(
                request,
                onResponse: { response in
                    guard response.statusCode == 200 else { return true }
                    return buffer.accept(expectedLength: response.expectedContentLength)
                }, onData: { buffer.append($0) })
            if response.statusCode != 200 {
                throw Storage.error(status: response.statusCode, body: buffer.data)
            }
            return buffer.data
        } catch let error as StorageError {
            throw error
        } catch {
            if let total = buffer.exceededTotal {
                throw StorageError(
                    .downloadSizeExceeded, "Attempted to download \(total) bytes; the limit is \(maxSize).")
            }
            if Task.isCancelled { throw .cancelled() }
            throw StorageError(.unknown, "Download failed: \(error)")
        }
    }

    /// A tokenised download URL, built from the first download token.
    public func downloadURL() async throws(StorageError) -> URL {
        let metadata = try await getMetadata()
        guard let token = metadata.downloadTokens.first else {
            throw StorageError(.unknown, "Failed to retrieve a download URL.")
        }
        return storage.url(
            for: StoragePath(bucket: metadata.bucket, object: metadata.path),
            query: [("alt", "media"), ("token", token)])
    }

    /// Downloads to a local file; the task can be paused, resumed (with `Range` + `If-Range`) and cancelled.
    @discardableResult
    public func write(toFile fileURL: URL) -> DownloadTask {
        let task = DownloadTask(reference: self, destination: fileURL)
        task.enqueue()
        return task
    }

    // MARK: Uploads

    @discardableResult
    public func putData(_ data: Data, metadata: StorageMetadata? = nil) -> UploadTask {
        let task = UploadTask(reference: self, source: .data(data), metadata: metadata ?? StorageMetadata())
        task.enqueue()
        return task
    }

    @discardableResult
    public func putFile(from fileURL: URL, metadata: StorageMetadata? = nil) -> UploadTask {
        let task = UploadTask(reference: self, source: .file(fileURL), metadata: metadata ?? StorageMetadata())
        task.enqueue()
        return task
    }

    static func decodeMetadata(_ data: Data) throws(StorageError) -> StorageMetadata {
        guard let json = try? JSONValue.parse(Array(data)) else {
            throw StorageError(.unknown, "Invalid metadata returned from the server.")
        }
        return try StorageMetadata(json: json)
    }
}

/// Collects a download in memory up to a limit, remembering by how much it was exceeded.
final class BoundedBuffer: @unchecked Sendable {
    private let lock = NSLock()
    private let limit: Int64
    private var storage = Data()
    private var exceeded: Int64?

    init(limit: Int64) { self.limit = limit }

    func accept(expectedLength: Int64) -> Bool {
        guard expectedLength > limit else { return true }
        lock.withLock { exceeded = expectedLength }
        return false
    }

    func append(_ chunk: Data) -> Bool {
        lock.withLock {
            let total = Int64(storage.count + chunk.count)
            guard total <= limit else { exceeded = total; return false }
            storage.append(chunk)
            return true
        }
    }

    var data: Data { lock.withLock { storage } }
    var exceededTotal: Int64? { lock.withLock { exceeded } }
}

extension StorageReference {
    /// Portcullis extension (not in the Firebase SDKs): an expiring HMAC-signed URL granting `method` on this
    /// object for `expiresIn` seconds. Needs the same permission as the method it grants.
    public func signedURL(method: String = "GET", expiresIn: Int = 3600) async throws(StorageError) -> (
        url: URL, expiresAt: String
    ) {
        let body = JSONValue.object(["method": .string(method), "expiresIn": .int(Int64(expiresIn))]).encoded()
        let request = try await storage.request(
            "POST", storage.url(for: path, query: [("signedUrl", "")]),
            headers: ["Content-Type": "application/json"], body: Data(body.utf8))
        let (_, data) = try await storage.perform(request)
        guard let json = try? JSONValue.parse(Array(data)), let text = json["url"]?.stringValue,
            let url = URL(string: text)
        else {
            throw StorageError(.unknown, "Invalid signed URL response.")
        }
        return (url, json["expiresAt"]?.stringValue ?? "")
    }
}
