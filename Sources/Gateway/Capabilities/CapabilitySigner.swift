import Crypto
public import PortcullisCore

/// One HMAC key for sealing capabilities. `id` travels in every sealed token so keys can rotate.
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
    /// The MAC does not verify: the token was edited.
    case badSignature
    /// The key id is not (or no longer) configured: the key was rotated out.
    case unknownKey
    /// The token is genuine but was issued for another bucket, prefix, object or method.
    case mismatch(String)
    case expired
}

/// Seals and opens the capabilities that make the gateway stateless (DESIGN §5): list cursors, resumable
/// upload URLs and signed URLs. Anything a later request needs travels with the client, under
/// HMAC-SHA256 with a key shared by every instance.
///
/// Token format: `base64url(keyID) "." base64url(payload JSON) "." base64url(HMAC)`, where the MAC covers a
/// purpose label plus the first two parts, so a token minted for one purpose never opens as another. The first
/// key signs; every key verifies (rotation: add the new key first, keep the old one until its tokens expire).
public final class CapabilitySigner: Sendable {
    private let keys: [SigningKey]

    /// Largest token accepted by `open`, so hostile input stays cheap.
    static let maxTokenLength = 16 * 1024

    public init(keys: [SigningKey]) {
        precondition(!keys.isEmpty, "CapabilitySigner needs at least one key")
        self.keys = keys
    }

    /// The id of the key new tokens are signed with.
    public var currentKeyID: String { keys[0].id }

    /// Seals `payload` for `purpose`.
    public func seal(purpose: Purpose, payload: JSONValue) -> String {
        let key = keys[0]
        let head = Base64URL.encode(Array(key.id.utf8)) + "."
            + Base64URL.encode(Array(payload.encoded().utf8))
        let mac = HMAC.sha256(key: key.secret, data: Self.macInput(purpose, head))
        return head + "." + Base64URL.encode(mac)
    }

    /// Verifies and decodes a token sealed for `purpose`.
    public func open(purpose: Purpose, token: some StringProtocol) throws(CapabilityError) -> JSONValue {
        guard token.utf8.count <= Self.maxTokenLength else { throw .malformed }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
              let keyIDBytes = Base64URL.decode(Substring(parts[0])),
              let mac = Base64URL.decode(Substring(parts[2])) else { throw .malformed }
        let keyID = String(decoding: keyIDBytes, as: UTF8.self)
        guard let key = keys.first(where: { $0.id == keyID }) else { throw .unknownKey }
        let head = parts[0] + "." + parts[1]
        let expected = HMAC.sha256(key: key.secret, data: Self.macInput(purpose, String(head)))
        guard ConstantTime.equals(expected, mac) else { throw .badSignature }
        guard let payloadBytes = Base64URL.decode(Substring(parts[1])),
              let payload = try? JSONValue.parse(payloadBytes) else { throw .malformed }
        return payload
    }

    private static func macInput(_ purpose: Purpose, _ head: String) -> [UInt8] {
        Array("portcullis/\(purpose.rawValue)\n\(head)".utf8)
    }

    /// What a token is for; part of the MAC input (domain separation).
    public enum Purpose: String, Sendable {
        case listCursor = "list-cursor/v1"
        case upload = "resumable-upload/v1"
        case signedURL = "signed-url/v1"
    }
}
