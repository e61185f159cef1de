/// The one error type of the Crypto module: what failed, plus OpenSSL's own error text when it has one.
///
/// `openSSLMessage` is for logs (it never contains key material); `kind` is for callers that branch.
public struct CryptoError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable {
        /// A key (PEM, JWK components) could not be parsed or is not usable for the operation.
        case invalidKey
        /// A certificate could not be parsed.
        case invalidCertificate
        /// The key type does not match the algorithm (an EC key asked for RS256, ...).
        case keyAlgorithmMismatch
        /// Signing or another OpenSSL operation failed unexpectedly.
        case operationFailed
    }

    public let kind: Kind
    /// What we were doing, for humans ("reading a PEM private key").
    public let context: String
    /// The first queued OpenSSL error string of the failing call, if OpenSSL reported one.
    public let openSSLMessage: String?

    public init(_ kind: Kind, _ context: String, openSSLMessage: String? = nil) {
        self.kind = kind
        self.context = context
        self.openSSLMessage = openSSLMessage
    }

    public var description: String {
        if let openSSLMessage { return "\(context): \(openSSLMessage)" }
        return context
    }
}
