import Crypto

/// The few cryptographic primitives the Gateway needs — HMAC-SHA256 for sealed capabilities, random UUIDs for
/// download tokens, strict base64url — forwarded to the `Crypto` target (the only importer of OpenSSL).
enum GatewayCrypto {
    static func hmacSHA256(key: [UInt8], data: [UInt8]) -> [UInt8] { HMAC.sha256(key: key, data: data) }

    static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool { ConstantTime.equals(a, b) }

    /// A random (version 4) UUID in lower case, the download-token format.
    static func uuid() -> String { SecureRandom.uuidString() }

    static func randomBytes(_ count: Int) -> [UInt8] { SecureRandom.bytes(count) }

    static func base64URLEncode(_ bytes: [UInt8]) -> String { Base64URL.encode(bytes) }

    static func base64URLDecode(_ text: Substring) -> [UInt8]? { Base64URL.decode(text) }
}
