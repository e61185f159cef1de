public import HTTPServer
import PortcullisCore
import Service

/// The gateway's `HTTPResponder`: ops routes, then the one router compiled from every surface's route table
/// (after authenticating the caller), then 404 (docs/architecture.md). It names no surface: it reads what the matched
/// route's surface declared (error shape, CORS lists, loggable query keys), writes the route's template on the
/// context once, answers OPTIONS and 405 from the table, and adds what every exchange gets — request ids,
/// its trace (the caller's `traceparent` joined, or a trace started: `Tracer`; a server span with
/// `authenticate` under it when recorded), CORS, HEAD handling, the access-log line and the HTTP metrics.
///
/// Every response carries `X-Request-Id` (the caller's if sane, else a generated one; `/healthz` only echoes a
/// caller's id). Every exchange except the ops probes gets one access-log line and the HTTP metrics when
/// `HTTPResponse.onComplete` fires — after the last byte, or as 499 when the client went away. `/healthz` is
/// counted with a pre-resolved counter and otherwise answered from a pre-rendered response.
///
/// On an event loop (`HTTPRequest.loop`, `ExchangeSummary.loop`) the metrics count into that loop's own cells
/// and the access-log line joins the loop's buffer, written at the end of the loop's turn.
public struct GatewayResponder: HTTPResponder {
    public let ops: OpsEndpoints
    public let router: GatewayRouter
    public let authentication: any RequestAuthenticating
    public let metrics: HTTPMetrics
    public let accessLog: AccessLog
    public let cors: CORSPolicy
    /// How requests join or start traces and whether their spans are recorded (`Tracer.off`: ids only).
    public let tracer: Tracer
    private let healthCounter: Counter

    /// Compiles the surfaces' route tables into one router; a table that does not compile is an error here, at
    /// start-up, never a surprise at run time.
    public init(
        ops: OpsEndpoints, surfaces: [any APISurface], authentication: any RequestAuthenticating,
        metrics: HTTPMetrics, accessLog: AccessLog, cors: CORSPolicy = CORSPolicy(origins: ["*"]),
        tracer: Tracer = .off
    ) throws(RouteTableError) {
        self.ops = ops
        self.cors = cors
        self.tracer = tracer
        self.router = try GatewayRouter(surfaces: surfaces)
        self.authentication = authentication
        self.metrics = metrics
        self.accessLog = accessLog
        healthCounter = metrics.requestCounter(
            route: OpsEndpoints.healthPath, method: HTTPMethodLabel("GET"), status: 200)
    }

    /// `GET /healthz` answered synchronously on the connection's event loop: no task, no access-log line (as in
    /// `respond(to:)`), just the pre-resolved counter. Everything else goes through `respond(to:)`.
    public func immediateResponse(to request: HTTPRequest) -> HTTPResponse? {
        guard request.method == .get, request.path.bytesEqual(OpsEndpoints.healthPath) else { return nil }
        var response = ops.healthResponse
        healthCounter.increment(on: request.loop?.currentShard)
        if let callerID = RequestIdentity.sanitized(request.headers["X-Request-Id"]) {
            response.headers.add("X-Request-Id", callerID)
        }
        return response
    }

    public func respond(to request: HTTPRequest) async -> HTTPResponse {
        let path = request.path
        if let opsRoute = OpsEndpoints.route(for: path) {
            return await respondToOps(request, route: opsRoute)
        }

        let requestID = RequestIdentity.sanitized(request.headers["X-Request-Id"]) ?? RequestIdentity.generate()
        let (trace, remoteParent) = tracer.beginRequest(
            traceparent: request.headers["traceparent"], tracestate: request.headers["tracestate"])
        return await respond(
            to: request,
            record: AccessRecord(requestID: requestID, trace: trace, inPlacePermit: request.loop?.inPlacePermit),
            remoteParent: remoteParent)
    }

    /// `respond(to:)` for a non-ops request, recorded in `record` (which the caller may keep, to see what the
    /// exchange decided). When `record.trace` is recorded, the exchange is a server span whose id is the
    /// trace's `spanID`, under `remoteParent` (the caller's span; 0 for a trace started here), ended with the
    /// access-log line.
    public func respond(to request: HTTPRequest, record: AccessRecord, remoteParent: UInt64 = 0) async
        -> HTTPResponse
    {
        let path = request.path
        let requestID = record.requestID
        let startedAt = Timestamp.now()
        let requestSpan = RequestSpan(record.trace, remoteParent: remoteParent, startedAt: startedAt)
        metrics.inflight.increment(on: request.loop?.currentShard)

        var response: HTTPResponse
        let decision =
            request.method == .options
            ? router.options(path: path, query: request.query)
            : router.decide(
                request.method, path: path, query: request.query, contentType: request.headers["Content-Type"])
        let surface: SurfaceTraits?
        let route: String
        switch decision {
        case .route(let label, let traits, _, _), .methodNotAllowed(let label, let traits, _, _):
            route = traits.labelPrefix.isEmpty ? label : traits.labelPrefix + label
            surface = traits
        case .notFound(let label, let traits):
            route = traits.map { $0.labelPrefix.isEmpty ? label : $0.labelPrefix + label } ?? label
            surface = traits
        }
        record.routeTemplate = route
        if let surface {
            response = await respond(to: request, decision, surface: surface, record: record)
        } else {
            response = PlainErrorShape().response(
                for: .notFound("No such route: \(request.method.rawValue) \(Self.printablePath(path))"),
                requestID: requestID)
        }
        if request.isHead { Self.stripForHead(&response) }
        if !response.headers.contains("X-Request-Id") { response.headers.add("X-Request-Id", requestID) }

        let handlerCompletion = response.onComplete
        let facts = RequestFacts(
            time: startedAt, method: request.method.rawValue,
            target: AccessLog.redactedTarget(request.target, keeping: surface?.loggableKeyBytes ?? []),
            remoteAddress: request.remoteAddress, userAgent: request.headers["User-Agent"])
        let metrics = self.metrics
        let accessLog = self.accessLog
        response.onComplete = { summary in
            handlerCompletion?(summary)
            let shard = summary.loop?.currentShard
            metrics.inflight.decrement(on: shard)
            let status = summary.completed ? summary.status : 499
            metrics.record(
                route: route, method: HTTPMethodLabel(facts.method), status: status,
                bytesIn: summary.bytesIn, bytesOut: summary.bytesOut, durationNanos: summary.durationNanos,
                on: shard)
            accessLog.write(
                facts.entry(route: route, record: record, summary: summary, status: status), loop: summary.loop)
            requestSpan?.end(method: facts.method, route: route, status: status, summary: summary, record: record)
        }
        return response
    }

    /// OPTIONS (a CORS preflight or a plain one) without authentication; anything else after it. CORS headers
    /// for an allowed origin go on every answer, errors included, so browsers can read them.
    private func respond(
        to request: HTTPRequest, _ decision: GatewayRouter.Decision, surface: SurfaceTraits, record: AccessRecord
    ) async -> HTTPResponse {
        var response: HTTPResponse
        if request.method == .options {
            if case .methodNotAllowed(_, _, let allow, let check) = decision {
                do {
                    try check?()
                    response = cors.preflight(request, methods: allow, for: surface)
                } catch {
                    response = surface.errorShape.response(for: ServiceError(any: error), requestID: record.requestID)
                }
            } else {
                response = surface.errorShape.response(
                    for: .notFound(surface.notFoundMessage), requestID: record.requestID)
            }
        } else {
            do throws(ServiceError) {
                var authSpan = record.trace.startSpan("authenticate")
                let principal: Principal?
                do throws(ServiceError) {
                    principal = try await authentication.authenticate(
                        authorizationBytes: request.headers.valueBytes("Authorization"))
                    authSpan?.setAttribute("portcullis.auth.result", principal == nil ? "anonymous" : "authenticated")
                    authSpan?.end()
                } catch {
                    authSpan?.setAttribute("portcullis.auth.result", "rejected")
                    authSpan?.setError("authentication failed")
                    authSpan?.end()
                    throw error
                }
                record.principalUID = principal?.uid
                switch decision {
                case .route(_, _, let handler, let match):
                    response = await handler(
                        MatchedRequest(request: request, match: match, principal: principal, record: record))
                case .methodNotAllowed(_, _, let allow, _):
                    response = surface.errorShape.response(
                        for: .methodNotAllowed(allow: allow), requestID: record.requestID)
                case .notFound:
                    response = surface.errorShape.response(
                        for: .notFound(surface.notFoundMessage), requestID: record.requestID)
                }
            } catch {
                response = surface.errorShape.response(for: error, requestID: record.requestID)
            }
        }
        cors.decorate(&response, for: request, surface: surface)
        return response
    }

    /// A HEAD answer: no body, but the `Content-Length` the GET would have (RFC 9110 §9.3.2), not 0.
    /// A HEAD keeps the framing its GET would have had: the length when one is known, chunked otherwise (a
    /// stream of unknown length stays, and the connection writes its head and cancels it).
    static func stripForHead(_ response: inout HTTPResponse) {
        var length: Int64?
        switch response.body {
        case .empty: return
        case .bytes(let bytes): length = Int64(bytes.count)
        case .file(let region): length = region.length
        case .stream(let stream, let declared):
            guard let declared else { return }
            stream.cancel()
            length = declared
        }
        if let length, !response.headers.contains("Content-Length") {
            response.headers.add("Content-Length", String(length))
        }
        response.body = .empty
    }

    private func respondToOps(_ request: HTTPRequest, route: String) async -> HTTPResponse {
        let callerID = RequestIdentity.sanitized(request.headers["X-Request-Id"])
        guard ops.isAllowed(request.method) else {
            let requestID = callerID ?? RequestIdentity.generate()
            var response = PlainErrorShape().response(
                for: .methodNotAllowed(allow: OpsEndpoints.allowedMethods),
                requestID: requestID)
            attachMetrics(&response, route: route, method: request.method)
            return response
        }
        var response: HTTPResponse
        switch route {
        case OpsEndpoints.healthPath:
            response = ops.healthResponse
            if request.method == .get {
                healthCounter.increment(on: request.loop?.currentShard)
            } else {
                attachMetrics(&response, route: route, method: request.method)
            }
            if let callerID { response.headers.add("X-Request-Id", callerID) }
            return response
        case OpsEndpoints.readyPath:
            response = await ops.readyResponse()
        default:
            response = ops.metricsResponse()
        }
        response.headers.add("X-Request-Id", callerID ?? RequestIdentity.generate())
        attachMetrics(&response, route: route, method: request.method)
        return response
    }

    /// Counts an ops exchange in the HTTP metrics (no access-log line for probes).
    private func attachMetrics(_ response: inout HTTPResponse, route: String, method: HTTPMethod) {
        let metrics = self.metrics
        let label = HTTPMethodLabel(method.rawValue)
        response.onComplete = { summary in
            metrics.record(
                route: route, method: label, status: summary.completed ? summary.status : 499,
                bytesIn: summary.bytesIn, bytesOut: summary.bytesOut, durationNanos: summary.durationNanos,
                on: summary.loop?.currentShard)
        }
    }

    /// The path as echoed in a 404 message: bounded length, control characters (C0 and DEL) as `?`.
    static func printablePath(_ path: Substring) -> String {
        let prefix = path.prefix(200)
        guard prefix.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            return String(prefix)
        }
        var out = ""
        for scalar in prefix.unicodeScalars {
            if scalar.value < 0x20 || scalar.value == 0x7F { out += "?" } else { out.unicodeScalars.append(scalar) }
        }
        return out
    }
}

/// What the access log needs from the request, captured before the request value goes away.
private struct RequestFacts: Sendable {
    let time: Timestamp
    let method: String
    let target: String
    let remoteAddress: String
    let userAgent: String?

    func entry(route: String, record: AccessRecord, summary: ExchangeSummary, status: Int) -> AccessLogEntry {
        let fields = record.snapshot
        return AccessLogEntry(
            time: time, requestID: record.requestID, remoteAddress: remoteAddress, method: method,
            route: route, target: target, bucket: fields.bucket, object: fields.objectName,
            status: status, bytesIn: summary.bytesIn, bytesOut: summary.bytesOut, durationNanos: summary.durationNanos,
            timeToFirstByteNanos: summary.timeToFirstByteNanos, upstreamNanos: fields.upstreamNanos,
            principalUID: fields.principalUID, decision: fields.decision?.rawValue, range: fields.range,
            userAgent: userAgent, traceID: record.traceID)
    }
}
