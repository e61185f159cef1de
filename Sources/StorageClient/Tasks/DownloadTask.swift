import Foundation
import PortcullisCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A download to a local file. Resuming continues with `Range: bytes=N-` and `If-Range: <etag>`; if the
/// object changed meanwhile the server answers 200 and the file is restarted from scratch, so versions are
/// never mixed.
public final class DownloadTask: StorageObservableTask, @unchecked Sendable {
    private let destination: URL
    private let lock = NSLock()
    private var written: Int64 = 0
    private var etag: String?
    /// Incremented by every attempt. A paused attempt's exchange may still deliver bytes for a moment after
    /// its cancellation; its callbacks compare their id with this under the lock and stop writing once a
    /// newer attempt exists, so the file and the byte count never mix two exchanges.
    private var attempt = 0

    init(reference: StorageReference, destination: URL) {
        self.destination = destination
        super.init(reference: reference)
    }

    override func perform() async throws(StorageError) -> StorageMetadata? {
        let storage = reference.storage
        let deadline = Date().addingTimeInterval(storage.settings.maxDownloadRetryTime)
        var delay = storage.settings.initialRetryDelay
        var lastFailure = ""
        while true {
            do {
                try await attempt()
                return nil
            } catch let error as StorageError {
                if error.code == .cancelled || !(error.httpStatus.map(Storage.isRetryable) ?? false) { throw error }
                lastFailure = error.message
            } catch {
                if Task.isCancelled { throw .cancelled() }
                lastFailure = NetworkFailure.describe(error, url: URL(string: storage.baseURL))
            }
            guard Date().addingTimeInterval(delay) < deadline else {
                throw StorageError(.retryLimitExceeded, "Download retry limit exceeded; last error: \(lastFailure)")
            }
            do { try await Task.sleep(nanoseconds: UInt64(delay * 1e9)) } catch { throw .cancelled() }
            delay = min(delay * 2, 64)
        }
    }

    private func attempt() async throws {
        let storage = reference.storage
        let (offset, knownETag, attemptID) = lock.withLock { () -> (Int64, String?, Int) in
            attempt += 1
            return (written, etag, attempt)
        }
        var headers: [String: String] = [:]
        if offset > 0, let knownETag {
            headers["Range"] = "bytes=\(offset)-"
            headers["If-Range"] = knownETag
        }
        let request = try await storage.request(
            "GET", storage.url(for: reference.path, query: [("alt", "media")]),
            headers: headers)
        let sink = try FileSink(url: destination, keepingFirst: offset)
        defer { sink.close() }
        let errorBody = LockedData()
        let response = try await StreamingCall.run(
            request,
            onResponse: { [self] response in
                let status = response.statusCode
                guard status == 200 || status == 206 else { return true }
                let length = response.expectedContentLength
                let base = lock.withLock { () -> Int64? in
                    guard attempt == attemptID else { return nil }
                    if status == 200 {
                        // Fresh (or changed) object: start over.
                        written = 0
                        sink.truncate()
                    }
                    etag = response.value(forHTTPHeaderField: "ETag")
                    return written
                }
                guard let base else { return false }
                updateProgress(completed: base, total: length >= 0 ? base + length : -1)
                return true
            },
            onData: { [self] chunk in
                guard sink.isOpenForBody else { return errorBody.append(chunk, limit: 64 << 10) }
                let done = lock.withLock { () -> Int64? in
                    guard attempt == attemptID, sink.write(chunk) else { return nil }
                    written += Int64(chunk.count)
                    return written
                }
                guard let done else { return false }
                updateProgress(completed: done, total: progress.totalUnitCount)
                return true
            }, bodyGate: sink)
        if response.statusCode == 416, offset > 0, knownETag != nil {
            // If-Range matched (else the server would have sent 200), so this is the same object and the
            // offset is at or past its end: the file is complete when the sizes agree; otherwise start over.
            let total = response.value(forHTTPHeaderField: "Content-Range")
                .flatMap { $0.bytesCut(at: UInt8(ascii: "/"), last: true) }.flatMap { Int64($0.after) }
            if total == offset {
                updateProgressAfterCompletion(total: offset)
                return
            }
            lock.withLock {
                written = 0; etag = nil
            }
            return try await attempt()  // offset 0 now: no Range, so this cannot come back here

        }
        guard response.statusCode == 200 || response.statusCode == 206 else {
            throw Storage.error(status: response.statusCode, body: errorBody.value)
        }
    }
}

extension DownloadTask {
    fileprivate func updateProgressAfterCompletion(total: Int64) {
        updateProgress(completed: total, total: total)
    }
}

/// The destination file, written as bytes arrive. Until a 200/206 head is seen the body is an error document
/// and is not written to the file.
final class FileSink: @unchecked Sendable {
    private let lock = NSLock()
    private let handle: FileHandle
    private var bodyOpen = false

    /// Opens `url` for writing after its first `keepingFirst` bytes (what earlier attempts wrote), dropping
    /// anything beyond them.
    init(url: URL, keepingFirst offset: Int64) throws {
        if offset == 0 || !FileManager.default.fileExists(atPath: url.path) {
            _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        }
        handle = try FileHandle(forWritingTo: url)
        try handle.truncate(atOffset: UInt64(offset))
        try handle.seek(toOffset: UInt64(offset))
    }

    func openBody() { lock.withLock { bodyOpen = true } }
    var isOpenForBody: Bool { lock.withLock { bodyOpen } }

    func truncate() {
        lock.withLock {
            try? handle.truncate(atOffset: 0)
            try? handle.seek(toOffset: 0)
        }
    }

    func write(_ data: Data) -> Bool {
        lock.withLock {
            do { try handle.write(contentsOf: data); return true } catch { return false }
        }
    }

    func close() { lock.withLock { try? handle.close() } }
}

extension StreamingCall {
    /// A download whose head decides whether the body goes to `bodyGate` (2xx) or is an error document.
    static func run(
        _ request: URLRequest, onResponse: @escaping @Sendable (HTTPURLResponse) -> Bool,
        onData: @escaping @Sendable (Data) -> Bool, bodyGate: FileSink
    ) async throws -> HTTPURLResponse {
        try await run(
            request,
            onResponse: { response in
                if response.statusCode == 200 || response.statusCode == 206 { bodyGate.openBody() }
                return onResponse(response)
            }, onData: onData)
    }
}
