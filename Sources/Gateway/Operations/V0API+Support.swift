import Crypto
import HTTPServer
import PortcullisCore
import Storage

/// Authorization and the small helpers every handler shares.
extension V0API {
    /// Asks the rules (v0 §7, rules.md §2.1) unless the principal is an admin. Called BEFORE any existence
    /// check, so a denied read of a missing object is 403, never 404. Records the decision on the context.
    func authorize(_ call: V0Call, _ method: AccessMethod, bucket: String, path: String,
                   principal: Principal?, resource: ObjectMetadata?, requestResource: ObjectMetadata? = nil,
                   delimiter: String? = nil) throws(GatewayError) {
        if principal?.isAdmin == true {
            call.context.decision = "admin"
            return
        }
        let decision = currentAuthorizer().authorize(AccessRequest(
            method: method, bucket: bucket, path: path, principal: principal, resource: resource,
            requestResource: requestResource, time: .now(), delimiter: delimiter))
        rulesDecisions.labels(method.rawValue, decision.allowed ? "allow" : "deny").increment()
        call.context.decision = decision.allowed ? "allow" : "deny"
        guard decision.allowed else {
            switch method {
            case .get: throw .forbidden("Permission denied. No READ permission.")
            case .list: throw .forbidden("Permission denied. No LIST permission.")
            case .create, .update, .delete: throw .forbidden("Permission denied. No WRITE permission.")
            }
        }
    }

    /// Runs a storage call, adding its duration to the request's upstream time.
    func storage<T>(_ call: V0Call, _ body: () async throws -> T) async throws -> T {
        let start = MonotonicClock.nanoseconds()
        defer { call.context.addUpstreamTime(nanos: MonotonicClock.nanoseconds() &- start) }
        return try await body()
    }

    /// The current metadata, or nil when the object does not exist (any other failure is thrown).
    func existingMetadata(_ call: V0Call, _ backend: any StorageBackend, _ object: ObjectPath) async throws
        -> ObjectMetadata? {
        do {
            return try await storage(call) { try await backend.metadata(of: object) }
        } catch StorageError.notFound {
            return nil
        }
    }

    /// A signed-URL grant for this request, if it carries `signature=` (DESIGN §7). A present but invalid
    /// signature is an error, never a fallback to rules: 400 when malformed, 403 otherwise.
    func signedGrant(_ call: V0Call, _ object: ObjectPath) throws(GatewayError) -> Bool {
        guard let token = call.query["signature"], !token.isEmpty else { return false }
        do {
            _ = try SignedURLGrant.open(signer, token: token, method: call.request.method.rawValue,
                                        bucket: object.bucket, name: object.name, now: .now())
        } catch .malformed {
            throw .badRequest("The signature parameter is malformed.")
        } catch .expired {
            throw .forbidden("The signed URL has expired.")
        } catch {
            throw .forbidden("The signed URL is not valid for this request.")
        }
        call.context.decision = "token"
        return true
    }

    /// Preconditions from `ifGenerationMatch` / `ifMetagenerationMatch` (400 when not integers).
    func queryPreconditions(_ call: V0Call) throws(GatewayError) -> Preconditions {
        func int(_ name: String) throws(GatewayError) -> Int64? {
            guard let text = call.query[name] else { return nil }
            guard let value = Int64(text), value >= 0 else { throw .badRequest("\(name) must be a non-negative integer.") }
            return value
        }
        return Preconditions(ifGenerationMatch: try int("ifGenerationMatch"),
                             ifMetagenerationMatch: try int("ifMetagenerationMatch"))
    }

    /// The quoted strong ETag of a generation/metageneration.
    static func etag(_ meta: ObjectMetadata) -> String { "\"\(meta.etag)\"" }

    /// Whether an `If-Match`/`If-None-Match` list matches `meta` (`*` matches any existing object). `weak`
    /// ignores `W/` prefixes (If-None-Match uses weak comparison, RFC 9110 §13.1.2).
    static func entityTagList(_ header: String, matches meta: ObjectMetadata, weak: Bool) -> Bool {
        let current = etag(meta)
        for raw in header.split(separator: ",") {
            var tag = raw.trimmingSpaces()
            if tag == "*" { return true }
            if tag.hasPrefix("W/") {
                guard weak else { continue }
                tag.removeFirst(2)
            }
            if tag == current { return true }
        }
        return false
    }

    /// Checks the client's preconditions against the current object: query generation preconditions and
    /// `If-Match`/`If-Unmodified-Since` → 412.
    func checkWritePreconditions(_ call: V0Call, _ meta: ObjectMetadata, _ pre: Preconditions) throws(GatewayError) {
        guard pre.isSatisfied(by: meta) else { throw .preconditionFailed() }
        if let ifMatch = call.headers["If-Match"] {
            guard Self.entityTagList(ifMatch, matches: meta, weak: false) else { throw .preconditionFailed() }
        } else if let text = call.headers["If-Unmodified-Since"], let date = HTTPDate.parse(text),
                  meta.updated.secondsSinceEpoch > date.secondsSinceEpoch {
            throw .preconditionFailed()
        }
    }

    /// The external base URL (`--public-url`, else `http://{Host}`), without a trailing slash.
    func baseURL(_ call: V0Call) -> String {
        if var url = configuration.publicURL {
            while url.hasSuffix("/") { url.removeLast() }
            return url
        }
        let host = call.headers["Host"] ?? ""
        let safe = !host.isEmpty && host.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
                || c == 0x2D || c == 0x2E || c == 0x3A || c == 0x5B || c == 0x5D || c == 0x5F
        }
        return "http://" + (safe ? host : "localhost")
    }

    /// `{base}/v0/b/{bucket}/o/{object}` with both segments encoded like `encodeURIComponent` (§2.4).
    func objectURL(_ call: V0Call, _ object: ObjectPath) -> String {
        baseURL(call) + "/v0/b/" + PercentDecoding.encodeComponent(object.bucket) + "/o/"
            + PercentDecoding.encodeComponent(object.name)
    }

    /// A JSON response (200 unless told otherwise).
    static func json(_ body: [UInt8], status: Int = 200, headers extra: [(String, String)] = []) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("Content-Type", "application/json; charset=utf-8")
        for (name, value) in extra { headers.add(name, value) }
        return HTTPResponse(status: status, headers: headers, body: .bytes(body))
    }

    /// Whether the body is declared as JSON (or not declared at all): only then is it parsed as JSON metadata
    /// (resumable start, signed-URL requests); other bodies are ignored.
    static func bodyIsJSON(_ call: V0Call) -> Bool {
        guard let type = call.headers["Content-Type"] else { return true }
        return type.lowercased().contains("json")
    }

    /// The request body as JSON bytes, refusing more than `maxJSONBodyBytes` (413).
    func collectJSONBody(_ call: V0Call) async throws -> [UInt8] {
        do {
            return try await call.request.body.collect(limit: configuration.maxJSONBodyBytes)
        } catch {
            throw GatewayError(bodyError: error)
        }
    }

    /// Mints the first download token of an object read through v0 (§5.1, §8), bumping its metageneration.
    /// Concurrent readers race on `ifMetagenerationMatch`; the loser re-reads and uses the winner's token.
    func mintFirstToken(_ call: V0Call, _ backend: any StorageBackend, _ meta: ObjectMetadata) async throws
        -> ObjectMetadata {
        var patch = MetadataPatch()
        patch.addDownloadTokens = [SecureRandom.uuidString()]
        let object = try V0Router.objectPath(meta.bucket, meta.name)
        do {
            return try await storage(call) {
                try await backend.updateMetadata(object, patch: patch, preconditions: Preconditions(
                    ifGenerationMatch: meta.generation, ifMetagenerationMatch: meta.metageneration))
            }
        } catch StorageError.preconditionFailed {
            guard let again = try await existingMetadata(call, backend, object) else { throw GatewayError.notFound() }
            return again
        }
    }

    /// Parses a non-negative decimal header value (400 when present but not a number).
    static func int64Header(_ headers: HTTPHeaders, _ names: String...) throws(GatewayError) -> Int64? {
        for name in names {
            guard let text = headers[name] else { continue }
            guard let value = Int64(text.trimmingSpaces()), value >= 0 else {
                throw .badRequest("\(name) must be a non-negative integer.")
            }
            return value
        }
        return nil
    }
}
