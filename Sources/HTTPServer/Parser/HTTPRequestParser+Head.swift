/// Head syntax: the request line and field lines, validated byte by byte.
extension HTTPRequestParser {
    // MARK: - Request line

    mutating func parseRequestLine(_ line: UnsafeRawBufferPointer) -> HTTPParseError? {
        guard let firstSpace = line.firstIndex(of: 0x20),
            let lastSpace = line.lastIndex(of: 0x20), lastSpace > firstSpace
        else { return .badRequest("malformed request line") }
        let methodBytes = UnsafeRawBufferPointer(rebasing: line[..<firstSpace])
        let targetBytes = UnsafeRawBufferPointer(rebasing: line[(firstSpace + 1)..<lastSpace])
        let versionBytes = UnsafeRawBufferPointer(rebasing: line[(lastSpace + 1)...])

        // Version first, so the HTTP/2 preface (`PRI * HTTP/2.0`) answers 505 rather than 400.
        switch Self.parseVersion(versionBytes) {
        case .valid(let minor): versionMinor = minor
        case .unsupported: return .versionNotSupported
        case .malformed: return .badRequest("malformed HTTP version")
        }
        guard !methodBytes.isEmpty, methodBytes.allSatisfy({ HTTPSyntax.isTokenByte($0) }) else {
            return .badRequest("malformed method")
        }
        guard !targetBytes.isEmpty else { return .badRequest("empty request target") }
        for byte in targetBytes where byte <= 0x20 || byte >= 0x7F || byte == 0x23 /* # */ {
            return .badRequest("invalid character in request target")
        }
        method = HTTPMethod(String(decoding: methodBytes, as: UTF8.self))
        if targetBytes[0] == 0x2F /* / */ {
            target = String(decoding: targetBytes, as: UTF8.self)
        } else if targetBytes.count == 1 && targetBytes[0] == 0x2A /* * */ {
            guard method == .options else { return .badRequest("asterisk target is only for OPTIONS") }
            target = "*"
        } else if let origin = Self.originForm(ofAbsolute: targetBytes) {
            target = origin
        } else {
            return .badRequest("malformed request target")
        }
        return nil
    }

    enum VersionResult { case valid(Int), unsupported, malformed }

    static func parseVersion(_ bytes: UnsafeRawBufferPointer) -> VersionResult {
        guard bytes.count > 5, bytes[0] == 0x48, bytes[1] == 0x54, bytes[2] == 0x54, bytes[3] == 0x50,
            bytes[4] == 0x2F /* HTTP/ */
        else { return .malformed }
        let rest = bytes.dropFirst(5)
        if rest.count == 3, HTTPSyntax.isDigit(rest[rest.startIndex]), rest[rest.startIndex + 1] == 0x2E,
            HTTPSyntax.isDigit(rest[rest.startIndex + 2])
        {
            let major = rest[rest.startIndex], minor = rest[rest.startIndex + 2]
            if major == 0x31 && (minor == 0x30 || minor == 0x31) { return .valid(Int(minor - 0x30)) }
            return .unsupported
        }
        // Other well-formed-looking versions (`HTTP/2`, `HTTP/10.0`) are versions we do not speak.
        if rest.allSatisfy({ HTTPSyntax.isDigit($0) || $0 == 0x2E }), HTTPSyntax.isDigit(rest[rest.startIndex]) {
            return .unsupported
        }
        return .malformed
    }

    /// `http://host[:port]/path?q` → `/path?q` (RFC 9112 §3.2.2: servers must accept absolute-form).
    static func originForm(ofAbsolute bytes: UnsafeRawBufferPointer) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        let lower = text.lowercased()
        let schemeLength: Int
        if lower.hasPrefix("http://") {
            schemeLength = 7
        } else if lower.hasPrefix("https://") {
            schemeLength = 8
        } else {
            return nil
        }
        let utf8 = Array(text.utf8)
        guard utf8.count > schemeLength else { return nil }
        let rest = utf8[schemeLength...]
        guard let end = rest.firstIndex(where: { $0 == 0x2F || $0 == 0x3F }) else {
            return rest.contains(0x40) ? nil : "/"
        }
        let authority = utf8[schemeLength..<end]
        guard !authority.isEmpty, !authority.contains(0x40) /* userinfo */ else { return nil }
        let path = String(decoding: utf8[end...], as: UTF8.self)
        return utf8[end] == 0x3F ? "/" + path : path
    }

    // MARK: - Fields

    /// Splits a field line into a token name and a value with surrounding whitespace removed, or nil when
    /// the line is not a valid field line.
    func parseField(_ line: UnsafeRawBufferPointer)
        -> (name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)?
    {
        guard let colon = line.firstIndex(of: 0x3A), colon > 0 else { return nil }
        let name = UnsafeRawBufferPointer(rebasing: line[..<colon])
        guard name.allSatisfy({ HTTPSyntax.isTokenByte($0) }) else { return nil }
        var start = colon + 1, end = line.count
        while start < end, line[start] == 0x20 || line[start] == 0x09 { start += 1 }
        while end > start, line[end - 1] == 0x20 || line[end - 1] == 0x09 { end -= 1 }
        let value = UnsafeRawBufferPointer(rebasing: line[start..<end])
        guard value.allSatisfy({ HTTPSyntax.isFieldValueByte($0) }) else { return nil }
        return (name, value)
    }

    /// The specific reason a field line was rejected (for the error message only).
    func fieldError(_ line: UnsafeRawBufferPointer) -> HTTPParseError {
        if let first = line.first, first == 0x20 || first == 0x09 { return .badRequest("obsolete line folding") }
        guard let colon = line.firstIndex(of: 0x3A), colon > 0 else { return .badRequest("malformed header field") }
        if line[colon - 1] == 0x20 || line[colon - 1] == 0x09 { return .badRequest("whitespace before colon") }
        if !line[..<colon].allSatisfy({ HTTPSyntax.isTokenByte($0) }) { return .badRequest("invalid header name") }
        return .badRequest("invalid character in header value")
    }

    /// Records the fields that decide framing and connection handling, and refuses the ones whose meaning a
    /// proxy and the gateway could read differently: a `Host` outside `host[:port]` and a repeated
    /// `Authorization` (a singleton field: which of two credentials names the caller?). A repeated `Host` is
    /// counted here and refused in `finishHead`.
    mutating func noteField(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> HTTPParseError? {
        switch name.count {
        case 4 where HTTPSyntax.equalsLowercase(name, "host"):
            hostCount += 1
            guard HTTPSyntax.isValidHost(value) else { return .badRequest("invalid Host") }
        case 13 where HTTPSyntax.equalsLowercase(name, "authorization"):
            authorizationCount += 1
            guard authorizationCount == 1 else { return .badRequest("repeated Authorization") }
        case 6 where HTTPSyntax.equalsLowercase(name, "expect"):
            if HTTPSyntax.equalsLowercase(value, "100-continue") { expectContinue = true }
        case 10 where HTTPSyntax.equalsLowercase(name, "connection"):
            for token in HTTPSyntax.listElements(value) {
                if HTTPSyntax.equalsLowercase(token, "close") { connectionClose = true }
                if HTTPSyntax.equalsLowercase(token, "keep-alive") { connectionKeepAlive = true }
            }
        case 14 where HTTPSyntax.equalsLowercase(name, "content-length"):
            contentLengthCount += 1
            guard contentLengthCount == 1 else { return .badRequest("repeated Content-Length") }
            guard !value.isEmpty, value.count <= 18, value.allSatisfy({ HTTPSyntax.isDigit($0) }) else {
                return .badRequest("invalid Content-Length")
            }
            contentLength = value.reduce(Int64(0)) { $0 * 10 + Int64($1 - 0x30) }
        case 17 where HTTPSyntax.equalsLowercase(name, "transfer-encoding"):
            let elements = HTTPSyntax.listElements(value, keepEmpty: true)
            guard !elements.isEmpty else { return .badRequest("empty Transfer-Encoding") }
            for element in elements {
                guard !element.isEmpty else { return .badRequest("empty transfer coding") }
                transferEncodings.append(String(decoding: element, as: UTF8.self).lowercased())
            }
        default:
            break
        }
        return nil
    }
}
