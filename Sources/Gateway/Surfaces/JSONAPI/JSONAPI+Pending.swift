import HTTPServer
import PortcullisCore
import Service

/// Operations routed but not yet served by this build.
extension JSONAPI {
    private static func pending() -> ServiceError { ServiceError(.notImplemented, "Not implemented yet.") }
    func patch(_ call: JSONCall, _ object: ObjectPath) async throws -> HTTPResponse { throw Self.pending() }
    func update(_ call: JSONCall, _ object: ObjectPath) async throws -> HTTPResponse { throw Self.pending() }
    func delete(_ call: JSONCall, _ object: ObjectPath) async throws -> HTTPResponse { throw Self.pending() }
    func upload(_ call: JSONCall, bucket: String, kind: JSONOperation.UploadKind) async throws -> HTTPResponse {
        throw Self.pending()
    }
    func resumable(_ call: JSONCall, bucket: String, uploadID: String) async throws -> HTTPResponse { throw Self.pending() }
    func copy(_ call: JSONCall, from source: ObjectPath, to destination: ObjectPath, rewrite: Bool) async throws
        -> HTTPResponse { throw Self.pending() }
    func compose(_ call: JSONCall, _ destination: ObjectPath) async throws -> HTTPResponse { throw Self.pending() }
}
