/// A percent-decoder over bytes (RFC 3986; `+` is a space in query strings only), written apart from the
/// gateway's `PercentEncoding` so the fuzz targets can check one against the other. Nil for a malformed escape
/// or a result that is not UTF-8.
public func referenceDecode(_ bytes: some Collection<UInt8>, plusIsSpace: Bool) -> [UInt8]? {
    func hex(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
    let input = Array(bytes)
    var out: [UInt8] = []
    var i = 0
    while i < input.count {
        if input[i] == UInt8(ascii: "%") {
            guard i + 2 < input.count, let hi = hex(input[i + 1]), let lo = hex(input[i + 2]) else { return nil }
            out.append(hi * 16 + lo)
            i += 3
        } else {
            out.append(plusIsSpace && input[i] == UInt8(ascii: "+") ? 0x20 : input[i])
            i += 1
        }
    }
    return String(validating: out, as: UTF8.self) == nil ? nil : out
}
