import Crypto
import PortcullisCore
import Upstream

/// OAuth2 access tokens for a service account (RFC 7523 JWT bearer grant), cached and refreshed five
/// minutes before expiry. One refresh at a time; concurrent callers share it.
actor GCSTokenSource {
    private let clientEmail: String
    private let key: PrivateKey
    private let tokenURI: String
    private let client: UpstreamClient
    private var cached: (token: String, expiresAt: Int64)?
    private var refreshing: Task<(String, Int64), any Error>?

    init(clientEmail: String, privateKeyPEM: String, tokenURI: String, client: UpstreamClient) throws(StorageError) {
        do { key = try PrivateKey(pem: privateKeyPEM) } catch {
            throw .invalidArgument("service-account private key: \(error)")
        }
        self.clientEmail = clientEmail
        self.tokenURI = tokenURI
        self.client = client
    }

    func token() async throws(StorageError) -> String {
        let now = Timestamp.now().secondsSinceEpoch
        if let cached, cached.expiresAt - 300 > now { return cached.token }
        let task = refreshing ?? Task { try await self.exchange(now: now) }
        refreshing = task
        do {
            let (token, expiresAt) = try await task.value
            cached = (token, expiresAt)
            refreshing = nil
            return token
        } catch {
            refreshing = nil
            if let error = error as? StorageError { throw error }
            throw .upstreamDenied("OAuth token exchange failed: \(error)")
        }
    }

    /// Signs the assertion and trades it for an access token. An unreachable or failing (5xx, 429) token
    /// endpoint is `.unavailable` (retry later); a refusal (4xx: bad key, unknown account) `.upstreamDenied`
    /// with the endpoint's `error_description`.
    private func exchange(now: Int64) async throws -> (String, Int64) {
        let header = JSONValue.object(["alg": .string("RS256"), "typ": .string("JWT")]).encoded()
        let claims = JSONValue.object([
            "iss": .string(clientEmail), "aud": .string(tokenURI), "iat": .int(now), "exp": .int(now + 3600),
            "scope": .string("https://www.googleapis.com/auth/devstorage.read_write"),
        ]).encoded()
        let signingInput = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
        let signature: [UInt8]
        do { signature = try key.sign(Array(signingInput.utf8), algorithm: .rs256) } catch {
            throw StorageError.internalError("signing the OAuth assertion: \(error)")
        }
        let assertion = signingInput + "." + Base64URL.encode(signature)
        let form = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)"
        let response: (status: Int, headers: [(String, String)], body: [UInt8])
        do {
            response = try await client.fetch(
                UpstreamRequest(
                    method: "POST", url: tokenURI, headers: [("Content-Type", "application/x-www-form-urlencoded")],
                    body: .bytes(Array(form.utf8)), backend: "gcs-oauth", operation: "token"), maxBytes: 64 * 1024)
        } catch {
            throw StorageError.unavailable(reason: "OAuth token endpoint unreachable: \(error)", retryAfter: 1)
        }
        let json = try? JSONValue.parse(response.body)
        guard response.status == 200 else {
            let detail =
                json?["error_description"]?.stringValue ?? json?["error"]?.stringValue
                ?? String(decoding: response.body.prefix(200), as: UTF8.self)
            let reason = "OAuth token endpoint answered \(response.status): \(detail)"
            if response.status == 429 || response.status >= 500 {
                throw StorageError.unavailable(reason: reason, retryAfter: 1)
            }
            throw StorageError.upstreamDenied(reason)
        }
        guard let token = json?["access_token"]?.stringValue, !token.isEmpty else {
            throw StorageError.upstreamDenied("OAuth token endpoint answered without an access_token")
        }
        return (token, now + (json?["expires_in"]?.int64Value ?? 3600))
    }
}
