/// Where the console's page finds the APIs it calls.
public enum ConsoleAPILocation: Sendable, Equatable {
    /// Beside the console on the same listener: the page calls `../` relative to itself.
    case sameOrigin
    /// On the main listener, another origin: `publicURL` (no trailing slash) when configured, else
    /// `http://{the host name the page was requested with}:{port}` (`https://` when the listeners speak TLS:
    /// `secure`).
    case separate(publicURL: String?, port: Int, secure: Bool = false)

    /// The API's base URL for a page requested with `host` (its `Host` header); nil for `.sameOrigin`.
    func baseURL(host: String?) -> String? {
        switch self {
        case .sameOrigin: return nil
        case .separate(let publicURL?, _, _): return publicURL
        case .separate(nil, let port, let secure):
            return "\(secure ? "https" : "http")://\(Self.hostName(host) ?? "localhost"):\(port)"
        }
    }

    /// The host name of a `Host` value without its port — a DNS name, IPv4 address or bracketed IPv6
    /// address — or nil when it is absent or anything else (it goes into the page and its policy).
    static func hostName(_ host: String?) -> String? {
        guard let host else { return nil }
        let bytes = Array(host.utf8)
        let name: ArraySlice<UInt8>
        if bytes.first == UInt8(ascii: "[") {
            guard let close = bytes.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            name = bytes[...close]
            guard
                name.dropFirst().dropLast().allSatisfy({
                    Self.isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".")
                })
            else { return nil }
        } else {
            name = bytes.prefix { $0 != UInt8(ascii: ":") }
            guard name.allSatisfy({ Self.isAlphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") })
            else { return nil }
        }
        guard name.count > (bytes.first == UInt8(ascii: "[") ? 2 : 0), name.count <= 255 else { return nil }
        return String(decoding: name, as: UTF8.self)
    }

    /// `scheme://authority` of an absolute URL (what a Content-Security-Policy source names).
    static func origin(of url: String) -> String {
        let utf8 = url.utf8
        guard let scheme = utf8.firstRange(of: "://".utf8) else { return url }
        let end = utf8[scheme.upperBound...].firstIndex(of: UInt8(ascii: "/")) ?? utf8.endIndex
        return String(url[..<end])
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z"))
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "f"))
    }
}
