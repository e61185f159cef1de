/// Base64 (RFC 4648 §4): padded, strict.
///
/// Decoding refuses anything that is not the canonical encoding of some bytes: whitespace, characters outside
/// the alphabet, missing or misplaced `=`, a length that is not a multiple of 4, non-zero unused bits.
public enum Base64 {
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        bytes.withBytes { Base64Codec.encode($0, alphabet: Base64Codec.standard, pad: true) }
    }

    /// The bytes, or nil when `text` is not canonical padded base64.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var text = String(text)
        return text.withUTF8 { Base64Codec.decode(UnsafeRawBufferPointer($0), url: false) }
    }

    public static func decode(bytes: UnsafeRawBufferPointer) -> [UInt8]? { Base64Codec.decode(bytes, url: false) }
}

/// Base64url (RFC 4648 §5) without padding, as JWS/JWK use it; strict.
///
/// Decoding refuses `=`, `+`, `/`, whitespace, a length ≡ 1 (mod 4) and non-zero unused bits, so each byte
/// string has exactly one accepted encoding.
public enum Base64URL {
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        bytes.withBytes { Base64Codec.encode($0, alphabet: Base64Codec.url, pad: false) }
    }

    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var text = String(text)
        return text.withUTF8 { Base64Codec.decode(UnsafeRawBufferPointer($0), url: true) }
    }

    public static func decode(bytes: UnsafeRawBufferPointer) -> [UInt8]? { Base64Codec.decode(bytes, url: true) }
}

enum Base64Codec {
    static let standard: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    static let url: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// 256-entry reverse tables; 0xFF marks a byte outside the alphabet.
    static let standardReverse: [UInt8] = reverse(standard)
    static let urlReverse: [UInt8] = reverse(url)

    private static func reverse(_ alphabet: [UInt8]) -> [UInt8] {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { table[Int(c)] = UInt8(i) }
        return table
    }

    static func encode(_ input: UnsafeRawBufferPointer, alphabet: [UInt8], pad: Bool) -> String {
        let full = input.count / 3
        let rest = input.count % 3
        let length = full * 4 + (rest == 0 ? 0 : (pad ? 4 : rest + 1))
        return String(unsafeUninitializedCapacity: length) { out in
            alphabet.withUnsafeBufferPointer { a in
                var o = 0
                var i = 0
                for _ in 0..<full {
                    let v = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
                    out[o] = a[Int(v >> 18)]
                    out[o + 1] = a[Int((v >> 12) & 63)]
                    out[o + 2] = a[Int((v >> 6) & 63)]
                    out[o + 3] = a[Int(v & 63)]
                    i += 3
                    o += 4
                }
                if rest == 1 {
                    let v = UInt32(input[i]) << 16
                    out[o] = a[Int(v >> 18)]
                    out[o + 1] = a[Int((v >> 12) & 63)]
                    o += 2
                    if pad { out[o] = 61; out[o + 1] = 61; o += 2 }
                } else if rest == 2 {
                    let v = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8
                    out[o] = a[Int(v >> 18)]
                    out[o + 1] = a[Int((v >> 12) & 63)]
                    out[o + 2] = a[Int((v >> 6) & 63)]
                    o += 3
                    if pad { out[o] = 61; o += 1 }
                }
                return o
            }
        }
    }

    static func decode(_ input: UnsafeRawBufferPointer, url: Bool) -> [UInt8]? {
        var n = input.count
        var tail = 0
        if url {
            if n % 4 == 1 { return nil }
            tail = n % 4
        } else {
            if n % 4 != 0 { return nil }
            if n > 0, input[n - 1] == 61 {
                n -= 1
                tail = 3
                if input[n - 1] == 61 { n -= 1; tail = 2 }
            }
        }
        let quads = url ? n / 4 : (tail == 0 ? n / 4 : n / 4)
        let outLength = quads * 3 + (tail == 0 ? 0 : tail - 1)
        let table = url ? urlReverse : standardReverse
        var failed = false
        let result = [UInt8](unsafeUninitializedCapacity: outLength) { out, count in
            table.withUnsafeBufferPointer { t in
                var i = 0
                var o = 0
                for _ in 0..<quads {
                    let a = t[Int(input[i])], b = t[Int(input[i + 1])], c = t[Int(input[i + 2])],
                        d = t[Int(input[i + 3])]
                    if (a | b | c | d) & 0xC0 != 0 { failed = true; return }
                    let v = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    out[o] = UInt8(truncatingIfNeeded: v >> 16)
                    out[o + 1] = UInt8(truncatingIfNeeded: v >> 8)
                    out[o + 2] = UInt8(truncatingIfNeeded: v)
                    i += 4
                    o += 3
                }
                if tail == 2 {
                    let a = t[Int(input[i])], b = t[Int(input[i + 1])]
                    if (a | b) & 0xC0 != 0 || b & 0x0F != 0 { failed = true; return }
                    out[o] = a << 2 | b >> 4
                    o += 1
                } else if tail == 3 {
                    let a = t[Int(input[i])], b = t[Int(input[i + 1])], c = t[Int(input[i + 2])]
                    if (a | b | c) & 0xC0 != 0 || c & 0x03 != 0 { failed = true; return }
                    out[o] = a << 2 | b >> 4
                    out[o + 1] = b << 4 | c >> 2
                    o += 2
                }
                count = o
            }
        }
        return failed ? nil : result
    }
}
