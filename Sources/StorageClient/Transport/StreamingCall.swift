import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP exchange over URLSession whose body is delivered chunk by chunk, so downloads stream to disk and
/// size limits are enforced without buffering past them.
///
/// Each call owns a short-lived URLSession (URLSession keeps its delegate until invalidated, so a session per
/// call is the simple way to never leak one). Cancelling the awaiting Swift task cancels the transfer.
final class StreamingCall: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    /// Thrown when a handler asked to stop; the handler's owner knows why.
    struct Stopped: Error {}

    private let lock = NSLock()
    private var continuation: CheckedContinuation<HTTPURLResponse, any Error>?
    private var response: HTTPURLResponse?
    private var stopped = false
    private var task: URLSessionDataTask?
    private let onResponse: @Sendable (HTTPURLResponse) -> Bool
    private let onData: @Sendable (Data) -> Bool

    private init(onResponse: @escaping @Sendable (HTTPURLResponse) -> Bool, onData: @escaping @Sendable (Data) -> Bool)
    {
        self.onResponse = onResponse
        self.onData = onData
    }

    /// Runs `request`. `onResponse` sees the head first; `onData` each body chunk in order. Either returning
    /// false stops the transfer and makes `run` throw `Stopped`.
    static func run(
        _ request: URLRequest,
        onResponse: @escaping @Sendable (HTTPURLResponse) -> Bool = { _ in true },
        onData: @escaping @Sendable (Data) -> Bool
    ) async throws -> HTTPURLResponse {
        let call = StreamingCall(onResponse: onResponse, onData: onData)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                call.start(request, continuation)
            }
        } onCancel: {
            call.cancel()
        }
    }

    /// Buffered convenience: the whole body (bounded by `limit`).
    static func data(_ request: URLRequest, limit: Int = 16 << 20) async throws -> (HTTPURLResponse, Data) {
        let buffer = LockedData()
        let response = try await run(request) { chunk in buffer.append(chunk, limit: limit) }
        return (response, buffer.value)
    }

    private func start(_ request: URLRequest, _ continuation: CheckedContinuation<HTTPURLResponse, any Error>) {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let session = URLSession(configuration: .ephemeral, delegate: self, delegateQueue: queue)
        let task = session.dataTask(with: request)
        let cancelledEarly = lock.withLock { () -> Bool in
            self.continuation = continuation
            self.task = task
            return stopped
        }
        task.resume()
        session.finishTasksAndInvalidate()
        if cancelledEarly { task.cancel() }
    }

    private func cancel() {
        let task = lock.withLock { () -> URLSessionDataTask? in
            stopped = true
            return self.task
        }
        task?.cancel()
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        guard let http = response as? HTTPURLResponse else { completionHandler(.cancel); return }
        lock.withLock { self.response = http }
        if onResponse(http) {
            completionHandler(.allow)
        } else {
            lock.withLock { stopped = true }
            completionHandler(.cancel)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        if !onData(data) {
            lock.withLock { stopped = true }
            dataTask.cancel()
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (continuation, response, stopped) = lock.withLock {
            () -> (CheckedContinuation<HTTPURLResponse, any Error>?, HTTPURLResponse?, Bool) in
            defer { self.continuation = nil }
            return (self.continuation, self.response, self.stopped)
        }
        if stopped {
            continuation?.resume(throwing: Stopped())
        } else if let error {
            continuation?.resume(throwing: error)
        } else if let response {
            continuation?.resume(returning: response)
        } else {
            continuation?.resume(throwing: URLError(.badServerResponse))
        }
    }
}

/// A byte buffer filled from URLSession's delegate queue and read after completion.
final class LockedData: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()

    func append(_ chunk: Data, limit: Int) -> Bool {
        lock.withLock {
            guard data.count + chunk.count <= limit else { return false }
            data.append(chunk)
            return true
        }
    }

    var value: Data { lock.withLock { data } }
}
