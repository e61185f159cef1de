public import PortcullisCore
public import Upstream

/// One POST of an event to a webhook.
public struct WebhookRequest: Sendable {
    public var url: String
    /// Metric label and circuit-breaker key for the receiver (`Webhook.label`).
    public var label: String
    public var headers: [(String, String)]
    public var body: [UInt8]
    /// The whole attempt — connect, send, response head — must end within this.
    public var timeout: Duration
    /// The delivery's trace: the POST carries its `traceparent` (nil: none).
    public var trace: Trace?

    public init(url: String, label: String, headers: [(String, String)], body: [UInt8], timeout: Duration) {
        self.url = url
        self.label = label
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}

/// Sends webhook requests: the I/O edge of the dispatcher (a fake one in tests).
public protocol WebhookTransport: Sendable {
    /// POSTs `request` and reports how it ended. Never throws: every failure is an outcome.
    func post(_ request: WebhookRequest) async -> DeliveryOutcome
}

/// Webhook requests over the process's libcurl client (`Upstream`). No client-side retries (the ledger
/// schedules retries); each receiver has its own circuit-breaker key, so one dead receiver neither slows the
/// others nor touches the storage backends' readiness.
public struct UpstreamWebhookTransport: WebhookTransport {
    private let client: UpstreamClient

    public init(client: UpstreamClient) {
        self.client = client
    }

    public func post(_ request: WebhookRequest) async -> DeliveryOutcome {
        let seconds = Double(request.timeout.totalNanoseconds) / 1e9
        let upstream = UpstreamRequest(
            method: "POST", url: request.url, headers: request.headers, body: .bytes(request.body),
            timeouts: UpstreamTimeouts(connect: seconds, firstByte: seconds, idle: seconds), idempotent: false,
            backend: "webhook " + request.label, operation: "event", trace: request.trace)
        let client = self.client
        // The per-phase timeouts above bound each phase; this bounds the whole attempt.
        return await withTaskGroup(of: DeliveryOutcome?.self) { group in
            group.addTask {
                do {
                    let response = try await client.send(upstream)
                    response.body.cancel()
                    return (200..<300).contains(response.status)
                        ? .acknowledged(status: response.status) : .rejected(status: response.status)
                } catch {
                    if Task.isCancelled { return nil }
                    return .failed("\(error)")
                }
            }
            group.addTask {
                try? await Task.sleep(nanoseconds: UInt64(max(0, request.timeout.totalNanoseconds)))
                return Task.isCancelled ? nil : .failed("timed out after \(seconds) s")
            }
            var outcome: DeliveryOutcome = .failed("cancelled")
            if let first = await group.next(), let result = first { outcome = result }
            group.cancelAll()
            return outcome
        }
    }
}
