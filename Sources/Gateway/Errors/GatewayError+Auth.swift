public import Auth

extension GatewayError {
    /// A rejected credential: 401 with `WWW-Authenticate` naming the reason class (RFC 6750), never the token.
    public init(_ error: AuthError) {
        self.init(status: 401, message: "Invalid credentials: \(error.description).",
                  headers: [("WWW-Authenticate", error.wwwAuthenticate)])
    }
}
