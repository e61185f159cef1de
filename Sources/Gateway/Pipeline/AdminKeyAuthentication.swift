import Crypto
public import PortcullisCore

/// Recognises `Authorization: Bearer <admin key>` (`--admin-key`) before any JWT verification, and otherwise
/// defers to the wrapped authenticator.
///
/// The comparison is constant-time over the presented credential, so response timing does not reveal how much
/// of the key a guess got right. The admin principal bypasses rules and may manage download tokens.
public struct AdminKeyAuthentication: RequestAuthenticating {
    /// SHA-256 of the admin key: comparing digests hides the key's length as well as its content.
    private let adminDigest: [UInt8]?
    private let next: any RequestAuthenticating

    public init(adminKey: [UInt8]?, next: any RequestAuthenticating) {
        adminDigest = adminKey.flatMap { $0.isEmpty ? nil : SHA256.hash($0) }
        self.next = next
    }

    public func authenticate(authorization: String?) async throws(GatewayError) -> Principal? {
        if let adminDigest, let authorization, let credential = Self.bearerCredential(authorization),
           ConstantTime.equals(SHA256.hash(credential.utf8), adminDigest) {
            return .admin
        }
        return try await next.authenticate(authorization: authorization)
    }

    /// The credential of a `Bearer` header (scheme compared case-insensitively).
    static func bearerCredential(_ header: String) -> Substring? {
        let utf8 = header.utf8
        guard utf8.count > 7 else { return nil }
        let scheme = header.prefix(7)
        guard HTTPHeadersCompare.equalsIgnoringCase(String(scheme), "Bearer ") else { return nil }
        return header.dropFirst(7)
    }
}

/// ASCII case-insensitive comparison (mirrors `HTTPHeaders.equalsIgnoringCase` without importing the server).
enum HTTPHeadersCompare {
    static func equalsIgnoringCase(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && zip(a.utf8, b.utf8).allSatisfy { x, y in
            (x >= 65 && x <= 90 ? x | 0x20 : x) == (y >= 65 && y <= 90 ? y | 0x20 : y)
        }
    }
}
