public import HTTPServer
public import Service

extension HTTPRequest {
    /// The whole body of a request whose body is a small document (JSON metadata, a patch, a rules query), at most
    /// `limit` bytes: more is 413, a body that breaks off is the error the service names for it. The one place
    /// every surface collects such a body; object bytes are never collected, they stream.
    public func collectDocument(limit: Int) async throws(ServiceError) -> [UInt8] {
        do {
            return try await body.collect(limit: limit)
        } catch {
            throw ServiceError(bodyError: error)
        }
    }
}
