public import Auth
import HTTPServer
public import PortcullisCore
public import Service

/// Service accounts' credentials ahead of the other authenticator: an access token from the token endpoint or a
/// self-signed JWT of a registered account is checked by `ServiceAccountAuthority`; every other header (none,
/// the admin key, users' JWTs) goes to `next` unchanged. Refusals count in `portcullis_auth_failures_total`
/// like the other authenticator's.
public struct ServiceAccountAuthentication: RequestAuthenticating {
    public let authority: ServiceAccountAuthority
    public let next: any RequestAuthenticating
    private let failures: AuthFailureCounters

    public init(authority: ServiceAccountAuthority, next: any RequestAuthenticating, metrics: MetricsRegistry) {
        self.authority = authority
        self.next = next
        failures = AuthFailureCounters(metrics)
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
            failures.count(error.reason)
            throw ServiceError(error)
        }
        switch outcome {
        case .principal(let principal): return principal
        case .notServiceAccount: return try await next.authenticate(authorizationBytes: header)
        }
    }
}

/// `portcullis_auth_failures_total{reason}` (the family `Authenticator` registers; the registry hands back the
/// same one) for refusals decided outside `Authenticator`: service-account credentials and token-endpoint
/// assertions.
public struct AuthFailureCounters: Sendable {
    private let counters: [AuthFailureReason: Counter]

    public init(_ metrics: MetricsRegistry) {
        let family = metrics.counter(
            "portcullis_auth_failures_total", help: "Rejected credentials by reason class.", labels: ["reason"])
        var counters: [AuthFailureReason: Counter] = [:]
        for reason in AuthFailureReason.allCases { counters[reason] = family.labels(reason.rawValue) }
        self.counters = counters
    }

    public func count(_ reason: AuthFailureReason) { counters[reason]?.increment() }
}
