import Foundation
import PortcullisCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An upload over the resumable protocol: start → chunks → finalize, recovering through `query`
/// after pauses and retryable failures. Memory stays bounded by one chunk.
public final class UploadTask: StorageObservableTask, @unchecked Sendable {
    enum Source: Sendable {
        case data(Data)
        case file(URL)
    }

    private let source: Source
    private let metadata: StorageMetadata
    private let lock = NSLock()
    /// The upload URL once started (a capability: chunk requests carry no Authorization).
    private var uploadURL: URL?
    private var granularity = 262_144
    private var confirmedOffset: Int64 = 0

    init(reference: StorageReference, source: Source, metadata: StorageMetadata) {
        self.source = source
        self.metadata = metadata
        super.init(reference: reference)
    }

    /// Waits for the upload's final metadata.
    public func result() async throws(StorageError) -> StorageMetadata {
        guard let metadata = try await waitForCompletion() else {
            throw StorageError(.unknown, "Upload returned no metadata.")
        }
        return metadata
    }

    private var totalSize: Int64 {
        get throws(StorageError) {
            switch source {
            case .data(let data): return Int64(data.count)
            case .file(let url):
                guard let size = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber
                else {
                    throw StorageError(.invalidArgument, "Cannot read file \(url.path)")
                }
                return size.int64Value
            }
        }
    }

    override func perform() async throws(StorageError) -> StorageMetadata? {
        let total = try totalSize
        let storage = reference.storage
        let deadline = Date().addingTimeInterval(storage.settings.maxUploadRetryTime)
        var delay = storage.settings.initialRetryDelay
        if lock.withLock({ uploadURL }) == nil { try await start(total: total) }
        var offset = try await queryOffset()
        updateProgress(completed: offset.offset, total: total)
        if offset.final { return try await reference.getMetadata() }
        var lastFailure = ""
        while true {
            let chunkSize = Self.roundToGranularity(storage.settings.uploadChunkSize, lock.withLock { granularity })
            let remaining = total - offset.offset
            let isLast = Int64(chunkSize) >= remaining
            let length = isLast ? Int(remaining) : chunkSize
            // A source that cannot be read (a file that changed) is not a transient failure: no retry.
            let chunk = try readChunk(offset: offset.offset, length: length)
            do {
                let (response, data) = try await sendChunk(chunk, offset: offset.offset, finalize: isLast)
                if response.statusCode == 200 {
                    if isLast { return try UploadTask.decodeFinal(data) }
                    offset.offset += Int64(length)
                    lock.withLock { confirmedOffset = offset.offset }
                    updateProgress(completed: offset.offset, total: total)
                    delay = storage.settings.initialRetryDelay
                    continue
                }
                let error = Storage.error(status: response.statusCode, body: data)
                let stillActive = (response.value(forHTTPHeaderField: "X-Goog-Upload-Status") ?? "") == "active"
                guard Storage.isRetryable(status: response.statusCode) || (stillActive && response.statusCode != 404)
                else {
                    throw error
                }
                lastFailure = error.message
            } catch let error as StorageError {
                if error.code == .cancelled || !(error.httpStatus.map(Storage.isRetryable) ?? true) { throw error }
                lastFailure = error.message
            } catch {
                if Task.isCancelled { throw .cancelled() }
                lastFailure = NetworkFailure.describe(error, url: URL(string: storage.baseURL))
            }
            // Recover: wait, then ask the server how much it has and continue from there.
            guard Date().addingTimeInterval(delay) < deadline else {
                throw StorageError(.retryLimitExceeded, "Upload retry limit exceeded; last error: \(lastFailure)")
            }
            do { try await Task.sleep(nanoseconds: UInt64(delay * 1e9)) } catch { throw .cancelled() }
            delay = min(delay * 2, 64)
            offset = try await queryOffset()
            if offset.final { return try await reference.getMetadata() }
        }
    }

    static func roundToGranularity(_ size: Int, _ granularity: Int) -> Int {
        guard granularity > 0 else { return size }
        return max(granularity, size / granularity * granularity)
    }

    private func start(total: Int64) async throws(StorageError) {
        let storage = reference.storage
        let contentType = metadata.contentType ?? "application/octet-stream"
        var body = metadata
        body.contentType = contentType
        let request = try await storage.request(
            "POST", storage.url(for: reference.root().path, query: [("name", reference.fullPath)]),
            headers: [
                "X-Goog-Upload-Protocol": "resumable", "X-Goog-Upload-Command": "start",
                "X-Goog-Upload-Header-Content-Length": String(total),
                "X-Goog-Upload-Header-Content-Type": contentType,
                "Content-Type": "application/json; charset=utf-8",
            ],
            body: Data(body.uploadJSON(path: reference.fullPath).encoded().utf8))
        let (response, _) = try await storage.perform(request)
        guard let urlText = response.value(forHTTPHeaderField: "X-Goog-Upload-URL"), let url = URL(string: urlText),
            response.value(forHTTPHeaderField: "X-Goog-Upload-Status") == "active"
        else {
            throw StorageError(.unknown, "The server did not start a resumable upload.")
        }
        let serverGranularity = response.value(forHTTPHeaderField: "X-Goog-Upload-Chunk-Granularity").flatMap {
            Int($0)
        }
        lock.withLock {
            uploadURL = url
            if let serverGranularity, serverGranularity > 0 { granularity = serverGranularity }
        }
    }

    private func uploadRequest(command: String, offset: Int64?, body: Data?) throws(StorageError) -> URLRequest {
        guard let url = lock.withLock({ uploadURL }) else { throw StorageError(.unknown, "Upload not started.") }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.timeoutInterval = reference.storage.settings.requestTimeout
        request.setValue(command, forHTTPHeaderField: "X-Goog-Upload-Command")
        request.setValue("resumable", forHTTPHeaderField: "X-Goog-Upload-Protocol")
        if let offset { request.setValue(String(offset), forHTTPHeaderField: "X-Goog-Upload-Offset") }
        request.httpBody = body
        return request
    }

    /// The server's persisted size and whether the upload is already final.
    private func queryOffset() async throws(StorageError) -> (offset: Int64, final: Bool) {
        let request = try uploadRequest(command: "query", offset: nil, body: nil)
        let (response, _) = try await reference.storage.perform(request)
        let status = response.value(forHTTPHeaderField: "X-Goog-Upload-Status") ?? ""
        if status == "cancelled" { throw StorageError(.cancelled, "The upload was cancelled on the server.") }
        guard let received = response.value(forHTTPHeaderField: "X-Goog-Upload-Size-Received").flatMap({ Int64($0) })
        else {
            throw StorageError(.unknown, "The server did not report the upload size.")
        }
        return (received, status == "final")
    }

    private func sendChunk(_ chunk: Data, offset: Int64, finalize: Bool) async throws -> (HTTPURLResponse, Data) {
        let request = try uploadRequest(command: finalize ? "upload, finalize" : "upload", offset: offset, body: chunk)
        return try await StreamingCall.data(request, limit: 1 << 20)
    }

    private func readChunk(offset: Int64, length: Int) throws(StorageError) -> Data {
        switch source {
        case .data(let data):
            let start = data.startIndex + Int(offset)
            return data.subdata(in: start..<(start + length))
        case .file(let url):
            do {
                let handle = try FileHandle(forReadingFrom: url)
                defer { try? handle.close() }
                try handle.seek(toOffset: UInt64(offset))
                let chunk = try handle.read(upToCount: length) ?? Data()
                guard chunk.count == length else {
                    throw StorageError(.unknown, "File \(url.path) changed during upload.")
                }
                return chunk
            } catch let error as StorageError {
                throw error
            } catch {
                throw StorageError(.unknown, "Cannot read \(url.path): \(error)")
            }
        }
    }

    static func decodeFinal(_ data: Data) throws(StorageError) -> StorageMetadata {
        try StorageReference.decodeMetadata(data)
    }

    override func didCancel() {
        guard let request = try? uploadRequest(command: "cancel", offset: nil, body: nil) else { return }
        // Best effort: tell the server to drop the staged bytes; the task has already failed with `cancelled`.
        Task.detached { _ = try? await StreamingCall.data(request, limit: 64 << 10) }
    }
}
