public import HTTPServer

/// The gateway's external base URL as both surfaces put it into the URLs they hand out (upload sessions,
/// download and self links): `--public-url` when configured, else `http://{Host}` — the Host header only when
/// it is a plain host[:port] (anything else could inject into a URL), `localhost` otherwise.
public enum PublicBaseURL {
    /// Without a trailing slash.
    public static func resolve(configured: String?, headers: HTTPHeaders) -> String {
        if var url = configured {
            while url.hasSuffix("/") { url.removeLast() }
            return url
        }
        let host = headers["Host"] ?? ""
        let safe =
            !host.isEmpty
            && host.utf8.allSatisfy { c in
                (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
                    || c == 0x2D || c == 0x2E || c == 0x3A || c == 0x5B || c == 0x5D || c == 0x5F
            }
        return "http://" + (safe ? host : "localhost")
    }
}
