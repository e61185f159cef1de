import Crypto
import PortcullisCore

/// One HMAC key for capabilities (cursors, upload URLs, signed URLs), as read from `--signing-key`.
public struct SigningKeyMaterial: Sendable, Equatable {
    public let id: String
    public let secret: [UInt8]

    public init(id: String, secret: [UInt8]) {
        self.id = id
        self.secret = secret
    }
}

/// Parsers for the contents of secret files. Pure: the executable reads the bytes and passes them in.
public enum SecretFiles {
    /// Secrets shorter than this are refused: they would make forged capabilities guessable.
    public static let minimumSecretBytes = 16

    /// `--signing-key` contents: lines `KEYID:BASE64SECRET` (blank lines and `#` comments ignored; the first key
    /// signs, every key verifies), or — when the file does not have that shape — one raw secret (trailing
    /// newline trimmed) whose id is the first 8 hex digits of its SHA-256.
    public static func signingKeys(from contents: [UInt8]) throws(ConfigurationError) -> [SigningKeyMaterial] {
        let text = String(decoding: contents, as: UTF8.self)
        let lines = text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" })
            .map { $0.trimmingCharacters() }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
        var keyed: [SigningKeyMaterial] = []
        let validUTF8 = String(validating: contents, as: UTF8.self) != nil
        if validUTF8, !lines.isEmpty {
            for line in lines {
                guard let colon = line.firstIndex(of: ":") else { keyed = []; break }
                let id = String(line[..<colon])
                let encoded = line[line.index(after: colon)...]
                guard isKeyID(id), let secret = Base64.decode(encoded) ?? Base64URL.decode(encoded) else {
                    keyed = []
                    break
                }
                keyed.append(SigningKeyMaterial(id: id, secret: secret))
            }
        }
        if !keyed.isEmpty {
            var ids = Set<ExactString>()
            for key in keyed {
                guard key.secret.count >= minimumSecretBytes else {
                    throw .unreadableFile(
                        option: .signingKey, path: "key \(key.id)",
                        reason: "secret is shorter than \(minimumSecretBytes) bytes")
                }
                guard ids.insert(ExactString(key.id)).inserted else {
                    throw .unreadableFile(option: .signingKey, path: "key \(key.id)", reason: "key id appears twice")
                }
            }
            return keyed
        }
        var raw = contents
        while let last = raw.last, last == 0x0A || last == 0x0D { raw.removeLast() }
        guard raw.count >= minimumSecretBytes else {
            throw .unreadableFile(
                option: .signingKey, path: "contents",
                reason: "expected KEYID:BASE64SECRET lines or a raw secret of at least \(minimumSecretBytes) bytes")
        }
        return [SigningKeyMaterial(id: rawKeyID(raw), secret: raw)]
    }

    /// The id of a raw secret: the first 8 hex digits of its SHA-256.
    public static func rawKeyID(_ secret: [UInt8]) -> String {
        let digest = SHA256.hash(secret)
        let hexDigits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        for byte in digest.prefix(4) {
            out.append(hexDigits[Int(byte >> 4)])
            out.append(hexDigits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A fresh random key for a process started without `--signing-key`.
    public static func randomSigningKey() -> SigningKeyMaterial {
        let secret = SecureRandom.bytes(32)
        return SigningKeyMaterial(id: "r" + rawKeyID(secret).prefix(7), secret: secret)
    }

    /// `--admin-key` / `--jwt-hmac-secret` contents: the bytes with surrounding whitespace trimmed; must be
    /// non-empty. (Length is the caller's concern: it warns on short admin keys.)
    public static func secret(from contents: [UInt8], option: ConfigurationOption, path: String)
        throws(ConfigurationError) -> [UInt8]
    {
        var bytes = contents[...]
        while let first = bytes.first, isSpace(first) { bytes.removeFirst() }
        while let last = bytes.last, isSpace(last) { bytes.removeLast() }
        guard !bytes.isEmpty else { throw .unreadableFile(option: option, path: path, reason: "file is empty") }
        return Array(bytes)
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    private static func isKeyID(_ id: String) -> Bool {
        (1...64).contains(id.utf8.count)
            && id.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
                    true
                default: false
                }
            }
    }
}

extension Substring {
    fileprivate func trimmingCharacters() -> String { String(self).trimmingASCIIWhitespace() }
}
