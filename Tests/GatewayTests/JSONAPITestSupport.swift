import Foundation
import HTTPServer
import PortcullisCore
import Rules
import Storage
import Testing

@testable import Gateway
@testable import Service

/// Both surfaces over one `StorageService` on a fresh embedded bucket, driven in-process through the gateway
/// pipeline with the principal each request names: the JSON API's tests, and the cross-surface ones.
struct JSONHarness {
    static let bucket = V0Harness.bucket
    let v0: V0Harness
    let api: JSONAPI

    init(rules: any RulesEngine = AllowAllRules(), service: ServiceConfiguration = ServiceConfiguration()) throws {
        v0 = try V0Harness(rules: rules, service: service)
        api = JSONAPI(
            service: v0.service, configuration: JSONAPIConfiguration(publicURL: "http://gateway.test"),
            logger: .disabled)
    }

    @discardableResult
    func send(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = [],
        stream: (any ByteStream)? = nil, principal: Principal? = .admin,
        record: AccessRecord = AccessRecord(requestID: "test")
    ) async throws -> TestResponse {
        try await respond(
            through: [v0.api, api], cors: v0.cors, method, target, headers: headers, body: body,
            stream: stream, principal: principal, record: record)
    }

    static func objectPath(_ name: String, bucket: String = bucket) -> String {
        "/storage/v1/b/\(bucket)/o/\(PercentEncoding.uriComponent.encode(name))"
    }

    /// Writes `name` through the service directly (an admin upload), for tests about reads and listings.
    @discardableResult
    func put(
        _ name: String, _ data: [UInt8], attributes: ObjectAttributes = ObjectAttributes(contentType: "text/plain")
    )
        async throws -> ObjectMetadata
    {
        try await v0.service.upload(
            UploadRequest(
                object: try ObjectPath(bucket: Self.bucket, name: name), attributes: attributes,
                mintDownloadToken: false),
            body: BufferByteStream(data), caller: Caller(principal: .admin),
            AccessRecord(requestID: "put").serviceContext)
    }
}

extension TestResponse {
    /// `error.errors[0].reason` of a JSON API error.
    var reason: String? { json?["error"]?["errors"]?.arrayValue?.first?["reason"]?.stringValue }
}
