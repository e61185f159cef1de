/// Percent-encoding of UTF-8 text with upper-case hex, parameterised by which ASCII bytes stay literal.
///
/// One loop for every dialect the gateway and its clients need — they differ only in their literal set:
/// RFC 3986 unreserved (S3 keys, SigV4 canonical queries), JavaScript's `encodeURIComponent` (v0 URLs the
/// Firebase SDKs parse back) and RFC 8187 `attr-char` (`Content-Disposition: filename*=`).
public struct PercentEncoding: Sendable {
    /// `literal[b]` is true for bytes written as themselves.
    private let literal: [Bool]

    /// Letters and digits stay literal, plus every byte of `extra`.
    public init(alsoLiteral extra: String) {
        var table = [Bool](repeating: false, count: 256)
        for b in UInt8(ascii: "A")...UInt8(ascii: "Z") { table[Int(b)] = true }
        for b in UInt8(ascii: "a")...UInt8(ascii: "z") { table[Int(b)] = true }
        for b in UInt8(ascii: "0")...UInt8(ascii: "9") { table[Int(b)] = true }
        for b in extra.utf8 { table[Int(b)] = true }
        literal = table
    }

    /// RFC 3986 unreserved: `A–Z a–z 0–9 - . _ ~`.
    public static let unreserved = PercentEncoding(alsoLiteral: "-._~")
    /// RFC 3986 unreserved plus `/` (object keys in S3 request paths).
    public static let unreservedAndSlash = PercentEncoding(alsoLiteral: "-._~/")
    /// JavaScript `encodeURIComponent`: `A–Z a–z 0–9 - _ . ! ~ * ' ( )`.
    public static let uriComponent = PercentEncoding(alsoLiteral: "-_.!~*'()")
    /// RFC 8187 `attr-char`: `A–Z a–z 0–9 ! # $ & + - . ^ _ ` | ~`.
    public static let rfc8187 = PercentEncoding(alsoLiteral: "!#$&+-.^_`|~")

    public func encode(_ text: String) -> String {
        var out = [UInt8]()
        out.reserveCapacity(text.utf8.count)
        append(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the encoding of `text` to `out`: links and ids rendered straight into a response body.
    public func append(_ text: String, to out: inout [UInt8]) {
        text.withContiguousUTF8 { appendEncoded($0, to: &out) }
    }

    /// Appends `escaped` decoded once (`%XX` only; `+` stays itself) and encoded again in this dialect: how a
    /// signature's canonical form re-escapes a path or query component whichever way the client escaped it.
    /// False when an escape is malformed or the decoded bytes are not UTF-8; `out` then holds a partial result.
    public func appendReencoded(_ escaped: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) -> Bool {
        guard escaped.contains(UInt8(ascii: "%")) else {
            // Nothing to decode: text that came as a `String` is UTF-8 already, but bytes need not be.
            guard escaped.allSatisfy({ $0 < 0x80 }) || Self.utf8String(escaped) != nil else { return false }
            appendEncoded(escaped, to: &out)
            return true
        }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: escaped.count) { buffer in
            guard let count = Self.decode(escaped, plusIsSpace: false, into: buffer) else { return false }
            let decoded = UnsafeBufferPointer(rebasing: buffer[..<count])
            guard decoded.allSatisfy({ $0 < 0x80 }) || Self.utf8String(decoded) != nil else { return false }
            appendEncoded(decoded, to: &out)
            return true
        }
    }

    /// Encodes `bytes` into stack memory and appends the result at once (one growth check, not one per byte).
    private func appendEncoded(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        let hex: StaticString = "0123456789ABCDEF"
        literal.withUnsafeBufferPointer { literal in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bytes.count * 3) { encoded in
                var count = 0
                for byte in bytes {
                    if literal[Int(byte)] {
                        encoded[count] = byte
                        count += 1
                    } else {
                        encoded[count] = UInt8(ascii: "%")
                        encoded[count + 1] = hex.utf8Start[Int(byte >> 4)]
                        encoded[count + 2] = hex.utf8Start[Int(byte & 0x0F)]
                        count += 3
                    }
                }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: encoded[..<count]))
            }
        }
    }
}

extension PercentEncoding {
    /// Decodes `%XX` escapes (either hex case) exactly once; with `plusIsSpace`, `+` is a space (query strings
    /// and S3's `encoding-type=url` listings — never a path). Nil for a malformed escape or bytes that
    /// are not UTF-8: a name is never repaired into another name.
    ///
    /// On every routed request (bucket and object name), so it works on the contiguous bytes and decodes into
    /// stack memory: the result `String` is the only allocation, and none for a short name.
    public static func decode(_ text: some StringProtocol, plusIsSpace: Bool) -> String? {
        var text = Substring(text)
        return text.withUTF8 { decode($0, plusIsSpace: plusIsSpace) }
    }

    /// `decode` of UTF-8 bytes (a piece of a query walked as bytes). Nil also for unescaped bytes that are not
    /// UTF-8.
    public static func decode(_ bytes: UnsafeBufferPointer<UInt8>, plusIsSpace: Bool) -> String? {
        // One pass finds whether there is anything to decode and whether the bytes are ASCII (then they are
        // UTF-8 without a second look).
        var seen: UInt8 = 0
        for byte in bytes {
            if byte == UInt8(ascii: "%") || (plusIsSpace && byte == UInt8(ascii: "+")) {
                return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bytes.count) { out -> String? in
                    guard let count = decode(bytes, plusIsSpace: plusIsSpace, into: out) else { return nil }
                    return utf8String(UnsafeBufferPointer(rebasing: out[..<count]))
                }
            }
            seen |= byte
        }
        return seen < 0x80 ? String(decoding: bytes, as: UTF8.self) : utf8String(bytes)
    }

    /// The text of `bytes` when they are UTF-8, else nil. `String(validating:)` is generic and looks up type
    /// metadata on each call (a few per cent of a presigned S3 GET, which decodes every query piece);
    /// `String(decoding:)` of a buffer is specialised, and it changes the bytes exactly when they are not UTF-8.
    static func utf8String(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        if bytes.allSatisfy({ $0 < 0x80 }) { return text }
        return text.utf8.elementsEqual(bytes) ? text : nil
    }

    /// Decodes `bytes` into `out` (at least `bytes.count` long) and returns how many bytes it wrote; nil for a
    /// malformed escape. The bytes written are not checked to be UTF-8.
    public static func decode(
        _ bytes: UnsafeBufferPointer<UInt8>, plusIsSpace: Bool, into out: UnsafeMutableBufferPointer<UInt8>
    ) -> Int? {
        var count = 0
        var i = 0
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: "%") {
                guard i + 2 < bytes.count, let hi = hexValue(bytes[i + 1]), let lo = hexValue(bytes[i + 2])
                else { return nil }
                out[count] = hi << 4 | lo
                i += 3
            } else {
                out[count] = plusIsSpace && c == UInt8(ascii: "+") ? 0x20 : c
                i += 1
            }
            count += 1
        }
        return count
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: c - 48
        case 65...70: c - 55
        case 97...102: c - 87
        default: nil
        }
    }
}
