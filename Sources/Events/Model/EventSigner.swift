import Crypto
import PortcullisCore

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
        return "t=\(stamp),v1=\(HexText.encode(HMAC.sha256(key: secret, data: message)))"
    }

}
