// grapheme-ok(file): `Webhook.parse` refuses every byte above 0x7F before it searches for a character

/// One configured receiver (`--events-webhook URL`): where events are POSTed, and the name it has in metrics
/// and logs.
public struct Webhook: Sendable, Equatable, Hashable {
    /// The URL exactly as configured (sent verbatim; the ledger keys deliveries by it).
    public let url: String
    /// `scheme://host[:port]/path` without credentials or query: safe for metric labels and log lines.
    public let label: String

    /// Validates `text`: an absolute `http://` or `https://` URL of ASCII with a host, no fragment, no whitespace
    /// or control characters. Returns why not, as a short phrase, on failure.
    public static func parse(_ text: String) -> Result<Webhook, WebhookURLError> {
        let lower = text.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else {
            return .failure(WebhookURLError("must start with http:// or https://"))
        }
        guard !text.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
            return .failure(WebhookURLError("must not contain spaces or control characters"))
        }
        // A URL is ASCII (RFC 3986; anything else percent-encoded), and on ASCII the `Character` searches below
        // are byte searches: with a combining mark after it, `@` or `/` would be one grapheme cluster that equals
        // neither, and the credentials could stay in the label.
        guard text.utf8.allSatisfy({ $0 < 0x80 }) else {
            return .failure(WebhookURLError("must be ASCII (percent-encode other characters)"))
        }
        guard !text.contains("#") else { return .failure(WebhookURLError("must not have a fragment")) }
        let afterScheme = text[text.index(text.startIndex, offsetBy: lower.hasPrefix("https") ? 8 : 7)...]
        let authorityEnd = afterScheme.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? afterScheme.endIndex
        var authority = afterScheme[..<authorityEnd]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var host = authority
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return .failure(WebhookURLError("bad IPv6 host")) }
            let rest = host[host.index(after: close)...]
            guard rest.isEmpty || (rest.hasPrefix(":") && isPort(rest.dropFirst())) else {
                return .failure(WebhookURLError("bad port"))
            }
            host = host[...close]
        } else if let colon = host.lastIndex(of: ":") {
            guard isPort(host[host.index(after: colon)...]) else { return .failure(WebhookURLError("bad port")) }
            host = host[..<colon]
        }
        guard !host.isEmpty else { return .failure(WebhookURLError("missing host")) }
        let path = afterScheme[authorityEnd...].prefix(while: { $0 != "?" })
        let scheme = lower.hasPrefix("https") ? "https://" : "http://"
        return .success(Webhook(url: text, label: scheme + authority + path))
    }

    private static func isPort(_ text: Substring) -> Bool {
        guard !text.isEmpty, text.utf8.count <= 5, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
            let port = Int(text)
        else { return false }
        return (1...65_535).contains(port)
    }
}

/// Why a webhook URL was refused.
public struct WebhookURLError: Error, Sendable, Equatable, CustomStringConvertible {
    public let reason: String
    init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}
