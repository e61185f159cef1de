import Crypto
public import PortcullisCore

/// One key for sealing capabilities. `id` travels in every sealed token so keys can rotate.
public struct SigningKey: Sendable {
    public let id: String
    public let secret: [UInt8]

    public init(id: String, secret: [UInt8]) {
        self.id = id
        self.secret = secret
    }

    /// A fresh random key (for a process started without `--signing-key`, and for tests).
    public static func random(id: String = "ephemeral") -> SigningKey {
        SigningKey(id: id, secret: SecureRandom.bytes(32))
    }
}

/// Why a sealed token was refused.
public enum CapabilityError: Error, Sendable, Equatable {
    /// Not a token of ours at all (bad shape, bad base64, not JSON).
    case malformed
    /// The token does not authenticate under the key it names: it was edited, or sealed for another purpose.
    case badSignature
    /// The key id is not (or no longer) configured: the key was rotated out.
    case unknownKey
    /// The token is genuine but was issued for another bucket, prefix, object or method.
    case mismatch(String)
    case expired
}

/// Seals and opens the capabilities that make the gateway stateless (docs/deploying.md): list cursors, resumable
/// upload URLs and signed URLs. Anything a later request needs travels with the client, encrypted and
/// authenticated under a key shared by every instance.
///
/// Token format: `base64url(keyID) "." base64url(nonce ‖ AES-256-GCM(payload JSON) ‖ tag)`. The cipher key is
/// derived per purpose from the signing secret (HKDF-SHA256, `info` = the purpose label), and the associated
/// data is the purpose label plus the key id, so a token minted for one purpose never opens as another and a
/// token's key id cannot be swapped. Encryption, not only a MAC: upload URLs carry the uploader's claims and
/// travel through proxies and logs. The first key seals; every key opens (rotation: add the new key first,
/// keep the old one until its tokens expire).
public final class CapabilitySealer: Sendable {
    private struct Keyed: Sendable {
        let id: ExactString
        let idPart: String
        /// One cipher per purpose, indexed by `Purpose.index`.
        let ciphers: [AEADKey]
        /// The HMAC key download tokens of resumable uploads are derived with.
        let tokenKey: [UInt8]
    }

    private let keys: [Keyed]

    /// Largest token accepted by `open`, so hostile input stays cheap.
    static let maxTokenLength = 16 * 1024

    public init(keys: [SigningKey]) {
        precondition(!keys.isEmpty, "CapabilitySealer needs at least one key")
        self.keys = keys.map { key in
            Keyed(
                id: ExactString(key.id), idPart: Base64URL.encode(Array(key.id.utf8)),
                ciphers: Purpose.allCases.map { purpose in
                    AEADKey(
                        HKDF.sha256(
                            secret: key.secret, info: Array("portcullis/\(purpose.rawValue)".utf8),
                            length: 32))
                },
                tokenKey: HKDF.sha256(
                    secret: key.secret, info: Array("portcullis/download-token/v1".utf8),
                    length: 32))
        }
    }

    /// Seals `payload` for `purpose`.
    public func seal(purpose: Purpose, payload: JSONValue) -> String {
        let key = keys[0]
        let box = key.ciphers[purpose.index].seal(
            Array(payload.encoded().utf8),
            associatedData: Self.associatedData(purpose, key.idPart))
        return key.idPart + "." + Base64URL.encode(box)
    }

    /// Authenticates, decrypts and parses a token sealed for `purpose`.
    public func open(purpose: Purpose, token: some StringProtocol) throws(CapabilityError) -> JSONValue {
        guard token.utf8.count <= Self.maxTokenLength else { throw .malformed }
        // Split on the byte: a `.` followed by a combining mark is one Character, and no split at all.
        let parts = token.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
            .map { Substring(String(decoding: $0, as: UTF8.self)) }
        guard parts.count == 2, let keyIDBytes = Base64URL.decode(parts[0]),
            let box = Base64URL.decode(parts[1]),
            let keyID = String(validating: keyIDBytes, as: UTF8.self)
        else { throw .malformed }
        guard let key = keys.first(where: { $0.id == ExactString(keyID) }) else { throw .unknownKey }
        guard
            let plaintext = key.ciphers[purpose.index].open(
                box, associatedData: Self.associatedData(purpose, String(parts[0])))
        else { throw .badSignature }
        guard let payload = try? JSONValue.parse(plaintext) else { throw .malformed }
        return payload
    }

    /// A download token derived from `input` under the key that sealed `token` (the current key when nil), so
    /// the same upload yields the same token at its start and at its finalize, on any instance, without the
    /// token travelling in its URL. Formatted as a version-4 UUID, like the tokens Firebase mints.
    func derivedDownloadToken(_ input: String, keyOf token: String?) -> String {
        var key = keys[0]
        if let token, let dot = token.utf8.firstIndex(of: UInt8(ascii: ".")) {
            let idPart = token[..<dot]
            key = keys.first { $0.idPart.bytesEqual(idPart) } ?? key
        }
        var b = Array(HMAC.sha256(key: key.tokenKey, data: Array(input.utf8)).prefix(16))
        b[6] = (b[6] & 0x0F) | 0x40
        b[8] = (b[8] & 0x3F) | 0x80
        let hex = b.map { byte -> String in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
        let chars = Array(hex)
        return String(chars[0..<8]) + "-" + String(chars[8..<12]) + "-" + String(chars[12..<16]) + "-"
            + String(chars[16..<20]) + "-" + String(chars[20..<32])
    }

    private static func associatedData(_ purpose: Purpose, _ keyIDPart: String) -> [UInt8] {
        Array("portcullis/\(purpose.rawValue)\n\(keyIDPart)".utf8)
    }

    /// What a token is for; part of the key derivation and the associated data (domain separation).
    public enum Purpose: String, Sendable, CaseIterable {
        case listCursor = "list-cursor/v2"
        case upload = "resumable-upload/v2"
        case signedURL = "signed-url/v2"

        var index: Int {
            switch self {
            case .listCursor: 0
            case .upload: 1
            case .signedURL: 2
            }
        }
    }
}
