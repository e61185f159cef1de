import HTTPServer
import PortcullisCore
import Rules
import Storage
import Testing

@testable import Gateway
@testable import Service

/// A backend without resumable staging (forwards the core to an embedded backend).
final class CoreOnlyBackend: StorageBackend {
    let base: EmbeddedBackend
    init(_ base: EmbeddedBackend) { self.base = base }
    func metadata(of object: ObjectPath) async throws(StorageError) -> ObjectMetadata {
        try await base.metadata(of: object)
    }
    func read(_ object: ObjectPath, range: ByteRangeSpec?) async throws(StorageError) -> ObjectRead {
        try await base.read(object, range: range)
    }
    func list(_ request: ListRequest) async throws(StorageError) -> ListPage { try await base.list(request) }
    func write(
        _ object: ObjectPath, body: any ByteStream, attributes: ObjectAttributes,
        options: WriteOptions
    ) async throws(StorageError) -> ObjectMetadata {
        try await base.write(object, body: body, attributes: attributes, options: options)
    }
    func updateMetadata(
        _ object: ObjectPath, patch: MetadataPatch,
        preconditions: Preconditions
    ) async throws(StorageError) -> ObjectMetadata {
        try await base.updateMetadata(object, patch: patch, preconditions: preconditions)
    }
    func delete(_ object: ObjectPath, preconditions: Preconditions) async throws(StorageError) {
        try await base.delete(object, preconditions: preconditions)
    }
    func isReady() async -> Bool { true }
}

@Suite struct V0ErrorTests {
    @Test(arguments: [
        (StorageError.notFound, 404, nil as String?),
        (.bucketNotFound("x"), 404, nil),
        (.preconditionFailed, 412, nil),
        (.rangeNotSatisfiable(size: 9), 416, "Content-Range: bytes */9"),
        (.checksumMismatch(.md5, expected: "a", actual: "b"), 400, nil),
        (.sizeMismatch(expected: 1, actual: 2), 400, nil),
        (.offsetMismatch(current: 5), 400, nil),
        (.bodyFailed(ByteStreamError.limitExceeded(limit: 10)), 413, nil),
        (.bodyFailed(ByteStreamError.truncated(expected: 10, received: 2)), 400, nil),
        (.bodyFailed(ByteStreamError.timedOut), 408, nil),
        (.rejected(ServiceError.forbidden("no")), 403, nil),
        (.unavailable(reason: "down", retryAfter: 7), 503, "Retry-After: 7"),
        (.unavailable(reason: "down", retryAfter: nil), 503, "Retry-After: 1"),
        (.timedOut("slow"), 504, nil),
        (.upstreamDenied("creds"), 502, nil),
        (.invalidArgument("bad"), 400, nil),
        (.internalError("boom"), 500, nil),
    ])
    func storageErrorMapping(error: StorageError, status: Int, header: String?) throws {
        let mapped = ServiceError(error)
        #expect(mapped.status == status)
        let response = V0ErrorShape().response(for: mapped, requestID: "rid")
        #expect(response.headers["X-Request-Id"] == "rid")
        if let header {
            let parts = header.split(separator: ":", maxSplits: 1).map { $0.trimmingSpaces() }
            #expect(response.headers[parts[0]] == parts[1])
        }
        guard case .bytes(let body) = response.body else { Issue.record("no body"); return }
        let json = try JSONValue.parse(body)
        #expect(json["error"]?["code"] == .int(Int64(status)))
        #expect(json["error"]?["message"]?.stringValue?.isEmpty == false)
        if status == 500 { #expect(json["error"]?["message"] == .string("Internal error.")) }
    }

    /// A resumable failure carries where the upload stands in v0's headers; a misplaced chunk also the size.
    @Test(arguments: [
        (V0ErrorShape.offsetMismatch(persisted: 5), 400, "active", "5" as String?),
        (ResumableFailure(.badRequest("done"), standing: .finished), 400, "final", nil),
        (ResumableFailure(.forbidden("no"), standing: .finished), 403, "final", nil),
        (ResumableFailure(.badRequest("gone"), standing: .cancelled), 400, "cancelled", nil),
        (ResumableFailure(.notFound("Unknown or expired upload."), standing: nil), 404, nil as String?, nil),
    ])
    func resumableFailureHeaders(failure: ResumableFailure, status: Int, upload: String?, received: String?) {
        let response = V0ErrorShape().response(for: failure, requestID: "rid")
        #expect(response.status == status)
        #expect(response.headers["X-Goog-Upload-Status"] == upload)
        #expect(response.headers["X-Goog-Upload-Size-Received"] == received)
    }

    @Test func resumableOnACoreOnlyBackendIs501() async throws {
        let h = try V0Harness()
        let service = StorageService(
            configuration: ServiceConfiguration(),
            backends: [V0Harness.bucket: CoreOnlyBackend(h.backend)], sealer: h.sealer,
            rules: RulesStore(fixed: AllowAllRules()), metrics: MetricsRegistry(),
            logger: .disabled)
        let api = V0API(service: service, logger: .disabled)
        let r = try await h.send(
            "POST", "/v0/b/default-bucket/o?name=x",
            headers: [
                ("X-Goog-Upload-Protocol", "resumable"), ("X-Goog-Upload-Command", "start"),
            ], api: api)
        #expect(r.status == 501)
        #expect(try await h.send("POST", "/v0/b/default-bucket/o?name=x", body: [1], api: api).status == 200)
    }
}
