public import HTTPServer
import PortcullisCore
import Service
import Synchronization

/// `POST /batch/storage/v1`: Cloud Storage's batch endpoint, as google-cloud-storage's `client.batch()` and
/// gcsfs's bulk delete use it. Each part is one JSON API call (`/storage/v1/…`, no media), and each is sent
/// through the whole gateway pipeline as a request of its own — authenticated (with the part's `Authorization`,
/// else the batch's), authorized by the rules, logged and counted — one after the other, in order; the answer is
/// a `multipart/mixed` body of their responses (`BatchCodec`). A part that cannot be run (not a JSON API path, a
/// download, a nested batch) is answered 400 in its place; the batch itself is 400 only when its body is not a
/// batch at all.
public final class BatchSurface: APISurface {
    public static let path = "/batch/storage/v1"
    /// The largest batch body taken (100 small JSON calls fit many times over).
    static let maxBodyBytes = 8 * 1024 * 1024

    public let traits = SurfaceTraits(
        errorShape: JSONErrorShape(), prefixes: [BatchSurface.path], notFoundMessage: "Not Found",
        loggableQueryKeys: [])
    /// The gateway's responder, which runs each part; connected once it is built (it is built from the
    /// surfaces, this one included).
    private let pipeline = Mutex<(any HTTPResponder)?>(nil)

    public init() {}

    /// Gives the surface the responder its parts go through. Called once, before serving.
    public func connect(_ responder: any HTTPResponder) {
        pipeline.withLock { $0 = responder }
    }

    public var routes: [Route<RouteHandler>] {
        [Route([.post], RouteTemplate(static: Self.path)) { [self] in await batch($0) }]
    }

    private func batch(_ matched: MatchedRequest) async -> HTTPResponse {
        let request = matched.request
        do {
            guard let responder = pipeline.withLock({ $0 }) else {
                throw ServiceError(.unavailable, "The batch endpoint is not ready.")
            }
            guard let boundary = request.headers["Content-Type"].flatMap(BatchCodec.boundary(contentType:)) else {
                throw ServiceError.badRequest("A batch is multipart/mixed with a boundary.")
            }
            let body = try await request.collectDocument(limit: Self.maxBodyBytes)
            let parts = try BatchCodec.parse(body, boundary: boundary)
            var answers: [BatchCodec.Answer] = []
            for part in parts {
                answers.append(await run(part, of: request, through: responder, requestID: matched.record.requestID))
            }
            let answerBoundary = "batch_" + matched.record.requestID
            var headers = HTTPHeaders()
            headers.add("Content-Type", "multipart/mixed; boundary=\(answerBoundary)")
            return HTTPResponse(
                status: 200, headers: headers, body: .bytes(BatchCodec.render(answers, boundary: answerBoundary)))
        } catch {
            return traits.errorShape.response(for: ServiceError(any: error), requestID: matched.record.requestID)
        }
    }

    /// One part through the pipeline; its access-log line and metrics are written when its answer is taken.
    private func run(
        _ part: BatchCodec.Part, of outer: HTTPRequest, through responder: any HTTPResponder, requestID: String
    ) async -> BatchCodec.Answer {
        let started = MonotonicClock.nanoseconds()
        let (path, query) = part.target.bytesCut(at: UInt8(ascii: "?")) ?? (part.target, "")
        // The query as the JSON API reads it — by bytes, percent-decoded — so no spelling of `alt=media` passes.
        let pairs = (try? QueryParameters(parsing: Substring(query)))?.pairs ?? []
        guard path.bytesHasPrefix("/storage/v1/"),
            !pairs.contains(where: { $0.name.bytesEqual("alt") && $0.value.bytesEqual("media") })
        else {
            return refusal(part, "A batch part must be a JSON API call under /storage/v1 without media.", requestID)
        }
        var headers = HTTPHeaders()
        for (name, value) in part.headers { headers.add(name, value) }
        for name in ["Authorization", "Host"] where !headers.contains(name) {  // identity-ok: header field names
            if let value = outer.headers[name] { headers.add(name, value) }
        }
        let sub = HTTPRequest(
            method: HTTPMethod(part.method), target: part.target, headers: headers,
            body: BufferByteStream(part.body), remoteAddress: outer.remoteAddress)
        let response = await responder.respond(to: sub)
        var body: [UInt8] = []
        var completed = true
        switch response.body {
        case .empty: break
        case .bytes(let bytes): body = bytes
        case .stream(let stream, _):
            do { body = try await stream.collect(limit: Self.maxBodyBytes) } catch { completed = false }
        case .file: completed = false
        }
        response.onComplete?(
            ExchangeSummary(
                status: response.status, bytesIn: Int64(part.body.count), bytesOut: Int64(body.count),
                completed: completed, durationNanos: MonotonicClock.nanoseconds() &- started,
                timeToFirstByteNanos: nil))
        guard completed else { return refusal(part, "The answer to a batch part could not be read.", requestID) }
        let kept = response.headers.fields.filter { field in
            !["Content-Length", "Transfer-Encoding", "Connection"].contains {
                $0.bytesEqualIgnoringASCIICase(field.name)
            }
        }
        return BatchCodec.Answer(
            contentID: part.contentID, status: response.status,
            reason: response.reason ?? HTTPResponse.standardReason(response.status), headers: kept, body: body)
    }

    /// A 400 in the JSON API's error shape, in the place of a part that is not run.
    private func refusal(_ part: BatchCodec.Part, _ message: String, _ requestID: String) -> BatchCodec.Answer {
        let response = traits.errorShape.response(for: .badRequest(message), requestID: requestID)
        var body: [UInt8] = []
        if case .bytes(let bytes) = response.body { body = bytes }
        return BatchCodec.Answer(
            contentID: part.contentID, status: 400, reason: "Bad Request",
            headers: [("Content-Type", "application/json; charset=UTF-8")], body: body)
    }
}
