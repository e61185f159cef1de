public import HTTPServer

/// The headers every console response carries: a strict Content-Security-Policy (scripts and styles only from
/// the gateway's own origin — no inline script, no `eval`, no inline style), no framing, no MIME sniffing, no
/// referrer (object URLs can carry signatures), and the cache policies of its two kinds of file.
public enum ConsoleHeaders {
    /// `img-src`/`frame-src 'self'` let previews load signed object URLs from this gateway; `connect-src 'self'`
    /// keeps every API call on it. Nothing may frame the console (`frame-ancestors`, and `X-Frame-Options` for
    /// older browsers).
    public static let contentSecurityPolicy = policy(apiOrigin: nil)

    /// The policy of a console page whose APIs live on `apiOrigin` (`scheme://host[:port]`, the console on its
    /// own listener): API calls, image and PDF previews may also go there, and nowhere else.
    public static func policy(apiOrigin: String?) -> String {
        let api = apiOrigin.map { " " + $0 } ?? ""
        return [
            "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self'" + api,
            "connect-src 'self'" + api, "frame-src 'self'" + api, "font-src 'self'", "manifest-src 'self'",
            "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
        ].joined(separator: "; ")
    }

    /// The page and any file whose URL does not carry the current version: revalidated on every use (a 304 when
    /// unchanged).
    public static let revalidate = "no-cache"
    /// A file under the current version: its URL changes whenever any file does.
    public static let immutable = "public, max-age=31536000, immutable"

    public static func apply(to headers: inout HTTPHeaders) {
        headers.set("Content-Security-Policy", contentSecurityPolicy)
        headers.set("X-Frame-Options", "DENY")
        headers.set("X-Content-Type-Options", "nosniff")
        headers.set("Referrer-Policy", "no-referrer")
        headers.set("Cross-Origin-Opener-Policy", "same-origin")
    }
}
