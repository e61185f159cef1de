public import Auth
public import Service

extension ServiceError {
    /// A rejected credential: 401 with `WWW-Authenticate` naming the reason class (RFC 6750), never the token.
    public init(_ error: AuthError) {
        var details = Details()
        details.challenge = error.wwwAuthenticate
        self.init(.unauthenticated, "Invalid credentials: \(error.description).", details: details)
    }
}
