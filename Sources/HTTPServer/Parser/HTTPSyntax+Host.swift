/// The `Host` field's grammar (RFC 9112 §3.2: `Host = uri-host [ ":" port ]`, with `host` and `port` from
/// RFC 3986 §3.2.2–3.2.3).
///
/// A value outside this grammar is refused (400) rather than passed on: a proxy in front of the gateway and the
/// gateway itself could read such a value differently, and the host ends up in the URLs the gateway hands out.
extension HTTPSyntax {
    /// Whether `value` is `host [":" port]`:
    /// - `host` is a reg-name (`unreserved / pct-encoded / sub-delims`, which covers IPv4 dotted quads and the
    ///   empty name RFC 9112 has clients send for a target without an authority), `[IPv6address]` or
    ///   `[vX.future]`;
    /// - `port` is at most five digits, no more than 65535 (RFC 3986 lets it be empty).
    ///
    /// One narrowing of the grammar: no comma, although reg-name allows it. `Host` is not a list, and `a,b` is
    /// what two `Host` fields look like once an intermediary has combined them; no DNS name holds a comma.
    static func isValidHost(_ value: UnsafeRawBufferPointer) -> Bool {
        guard !value.contains(0x2C /* , */) else { return false }
        var hostEnd = value.count
        if value.first == 0x5B /* [ */ {
            guard let close = value.firstIndex(of: 0x5D /* ] */) else { return false }
            let literal = UnsafeRawBufferPointer(rebasing: value[1..<close])
            guard isIPv6Address(literal) || isIPvFuture(literal) else { return false }
            hostEnd = close + 1
            guard hostEnd == value.count || value[hostEnd] == 0x3A else { return false }
        } else {
            if let colon = value.firstIndex(of: 0x3A /* : */) { hostEnd = colon }
            guard isRegName(UnsafeRawBufferPointer(rebasing: value[..<hostEnd])) else { return false }
        }
        guard hostEnd < value.count else { return true }
        return isPort(UnsafeRawBufferPointer(rebasing: value[(hostEnd + 1)...]))
    }

    /// `*( unreserved / pct-encoded / sub-delims )`.
    static func isRegName(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x25 /* % */ {
                guard index + 2 < bytes.count, hexValue(bytes[index + 1]) != nil, hexValue(bytes[index + 2]) != nil
                else { return false }
                index += 3
                continue
            }
            guard isUnreserved(byte) || isSubDelim(byte) else { return false }
            index += 1
        }
        return true
    }

    /// `*DIGIT` read as a TCP port: empty, or one to five digits worth at most 65535.
    static func isPort(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count <= 5, bytes.allSatisfy({ isDigit($0) }) else { return false }
        return bytes.reduce(0) { $0 * 10 + Int($1 - 0x30) } <= 65535
    }

    /// RFC 3986 `IPv6address`: eight 16-bit hex groups, or fewer around one `::`, the last 32 bits optionally
    /// written as an IPv4 dotted quad. No zone identifier (HTTP has none).
    static func isIPv6Address(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var groups = 0
        var compressed = false
        var index = 0
        if bytes.count >= 2, bytes[0] == 0x3A, bytes[1] == 0x3A {
            compressed = true
            index = 2
            if index == bytes.count { return true }
        } else if bytes.first == 0x3A {
            return false
        }
        while index < bytes.count {
            var end = index
            while end < bytes.count, bytes[end] != 0x3A { end += 1 }
            let piece = UnsafeRawBufferPointer(rebasing: bytes[index..<end])
            if end == bytes.count, piece.contains(0x2E /* . */) {
                guard isIPv4Address(piece) else { return false }
                groups += 2
                break
            }
            guard (1...4).contains(piece.count), piece.allSatisfy({ hexValue($0) != nil }) else { return false }
            groups += 1
            guard end < bytes.count else { break }
            // A separator: `:` before another group, or the one `::` (possibly at the end).
            if end + 1 < bytes.count, bytes[end + 1] == 0x3A {
                guard !compressed else { return false }
                compressed = true
                index = end + 2
                if index == bytes.count { break }
            } else {
                index = end + 1
                guard index < bytes.count else { return false }
            }
        }
        return compressed ? groups <= 7 : groups == 8
    }

    /// RFC 3986 `IPv4address`: four `dec-octet`s (0–255, no leading zeros).
    static func isIPv4Address(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var octets = 0
        var start = 0
        for end in 0...bytes.count where end == bytes.count || bytes[end] == 0x2E {
            let octet = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
            guard (1...3).contains(octet.count), octet.allSatisfy({ isDigit($0) }),
                octet.count == 1 || octet[0] != 0x30,
                octet.reduce(0, { $0 * 10 + Int($1 - 0x30) }) <= 255
            else { return false }
            octets += 1
            start = end + 1
        }
        return octets == 4
    }

    /// RFC 3986 `IPvFuture`: `"v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" )`.
    static func isIPvFuture(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count >= 4, bytes[0] | 0x20 == 0x76 /* v */,
            let dot = bytes.firstIndex(of: 0x2E), dot > 1, dot + 1 < bytes.count,
            bytes[1..<dot].allSatisfy({ hexValue($0) != nil })
        else { return false }
        return bytes[(dot + 1)...].allSatisfy { isUnreserved($0) || isSubDelim($0) || $0 == 0x3A }
    }

    /// `ALPHA / DIGIT / "-" / "." / "_" / "~"`.
    @inline(__always) static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x2D, 0x2E, 0x5F, 0x7E: true
        default: false
        }
    }

    /// `"!" / "$" / "&" / "'" / "(" / ")" / "*" / "+" / "," / ";" / "="`.
    @inline(__always) static func isSubDelim(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x21, 0x24, 0x26...0x2C, 0x3B, 0x3D: true
        default: false
        }
    }
}
