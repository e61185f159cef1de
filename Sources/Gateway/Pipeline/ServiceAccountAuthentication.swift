public import Auth
import HTTPServer
public import PortcullisCore
public import Service

/// Service accounts' credentials ahead of the other authenticator: an access token from the token endpoint or a
/// self-signed JWT of a registered account is checked by `ServiceAccountAuthority`; every other header (none,
/// the admin key, users' JWTs) goes to `next` unchanged.
public struct ServiceAccountAuthentication: RequestAuthenticating {
    public let authority: ServiceAccountAuthority
    public let next: any RequestAuthenticating

    public init(authority: ServiceAccountAuthority, next: any RequestAuthenticating) {
        self.authority = authority
        self.next = next
    }

    public func authenticate(authorization: String?) async throws(ServiceError) -> Principal? {
        try await authenticate(authorizationBytes: authorization.map { ArraySlice($0.utf8) })
    }

    public func authenticate(authorizationBytes: ArraySlice<UInt8>?) async throws(ServiceError) -> Principal? {
        guard let header = authorizationBytes else { return try await next.authenticate(authorizationBytes: nil) }
        let outcome: ServiceAccountAuthority.Outcome
        do {
            outcome = try authority.authenticate(authorizationBytes: header)
        } catch {
            throw ServiceError(error)
        }
        switch outcome {
        case .principal(let principal): return principal
        case .notServiceAccount: return try await next.authenticate(authorizationBytes: header)
        }
    }
}
