public import HTTPServer

/// The headers that keep an object's bytes from acting with the gateway's authority (docs/security.md).
///
/// Objects are whatever their uploaders chose, served from the gateway's own origin — the origin of
/// `/console/`, which keeps the admin key or a user's JWT in `sessionStorage`. An HTML or SVG object opened in
/// a browser would otherwise run its script on that origin and read the credential.
/// `Content-Security-Policy: sandbox` (no `allow-*` token) turns the document into an opaque origin with no
/// script, no forms, no plugins and no popups, so it can reach no storage, cookie or credential of the
/// gateway's origin; `nosniff` stops browsers from reinterpreting bytes as a more active type than the one
/// served. Images and media embedded with `<img>`/`<video>` ignore the policy, and `inline` objects still
/// render (as static documents), so clients see what Cloud Storage serves them.
///
/// Every response that carries object bytes or stands for them (200, 206, HEAD, 304) gets these headers, on
/// every surface: `ObjectContent.httpResponse(headers:record:)` adds them, and so does each surface's 304.
public enum UserContentIsolation {
    /// The document gets an opaque origin and runs nothing.
    public static let contentSecurityPolicy = "sandbox"

    /// Adds the isolation headers, replacing any earlier value of the same names.
    public static func apply(to headers: inout HTTPHeaders) {
        headers.set("Content-Security-Policy", contentSecurityPolicy)
        headers.set("X-Content-Type-Options", "nosniff")
    }
}
