import Crypto

/// Signs event bodies so a receiver can tell them from forgeries and replays (`--events-secret`):
/// `Portcullis-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`.
///
/// `t` is the sending time of the attempt (not the commit time), so a receiver may refuse signatures older
/// than a few minutes; every retry is signed afresh. The receiver recomputes the HMAC over the exact body
/// bytes and compares in constant time (docs/events.md shows how).
public struct EventSigner: Sendable {
    public static let headerName = "Portcullis-Signature"
    private let secret: [UInt8]

    public init(secret: [UInt8]) {
        self.secret = secret
    }

    /// The header value for `body` sent at `seconds` (Unix time).
    public func signature(body: [UInt8], at seconds: Int64) -> String {
        let stamp = String(seconds)
        var message = Array(stamp.utf8)
        message.append(UInt8(ascii: "."))
        message.append(contentsOf: body)
        return "t=\(stamp),v1=\(Self.hex(HMAC.sha256(key: secret, data: message)))"
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
