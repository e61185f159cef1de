import Crypto
import PortcullisCore

/// An immutable set of verification keys parsed from one key document.
///
/// Accepted documents (detected from the content):
/// - PEM text with one or more `PUBLIC KEY`, `RSA PUBLIC KEY` and/or `CERTIFICATE` blocks (keys without `kid`);
/// - a JWKS `{"keys": [...]}` with RSA (`n`, `e`) and EC P-256/P-384 (`crv`, `x`, `y`) keys, each with a `kid`;
/// - Google's x509 certificate map `{"<kid>": "-----BEGIN CERTIFICATE-----..."}` (Firebase securetoken keys).
/// JWKS entries that are not signature keys (`use` other than `sig`) or have unsupported types are skipped;
/// a document with no usable key at all is an error.
public final class KeySet: Sendable {
    public let keys: [VerificationKey]
    /// Non-fatal notes from parsing (skipped entries), for the key source's log line.
    public let skipped: [String]
    /// Key ids are matched by their bytes: a token naming a canonically equivalent spelling of a `kid` names no key.
    private let byKeyID: [ExactString: Int]
    let anonymous: [VerificationKey]
    let fingerprints: Set<String>

    public init(keys: [VerificationKey], skipped: [String] = []) {
        self.keys = keys
        self.skipped = skipped
        var index: [ExactString: Int] = [:]
        for (i, key) in keys.enumerated() {
            if let kid = key.keyID.map({ ExactString($0) }), index[kid] == nil { index[kid] = i }
        }
        byKeyID = index
        anonymous = keys.filter { $0.keyID == nil }
        fingerprints = Set(keys.map(\.fingerprint))
    }

    public static let empty = KeySet(keys: [])

    public func key(id: String) -> VerificationKey? { byKeyID[ExactString(id)].map { keys[$0] } }

    /// Parses a key document (see the type's documentation for the formats).
    public static func parse(document: [UInt8]) throws(AuthError) -> KeySet {
        let text = String(decoding: document, as: UTF8.self)
        let start = text.first(where: { !$0.isWhitespace })
        let set: KeySet
        if start == "{" {
            let json: JSONValue
            do { json = try JSONValue.parse(document) } catch {
                throw AuthError(.noKeys, "key document is not valid JSON: \(error)")
            }
            guard let object = json.objectValue else { throw AuthError(.noKeys, "key document is not a JSON object") }
            if let keys = object["keys"] {
                set = try parseJWKS(keys)
            } else {
                set = try parseCertificateMap(object)
            }
        } else if text.contains("-----BEGIN ") {
            set = try parsePEM(text)
        } else {
            throw AuthError(.noKeys, "key document is neither PEM nor JSON")
        }
        guard !set.keys.isEmpty else {
            throw AuthError(.noKeys, "key document holds no usable key (\(set.skipped.joined(separator: "; ")))")
        }
        return set
    }

    static func parsePEM(_ text: String) throws(AuthError) -> KeySet {
        var keys: [VerificationKey] = []
        var rest = Substring(text)
        while let begin = rest.firstRange(of: "-----BEGIN ") {
            guard let endMarker = rest[begin.upperBound...].firstRange(of: "-----END "),
                let close = rest[endMarker.upperBound...].firstRange(of: "-----")
            else { throw AuthError(.noKeys, "unterminated PEM block") }
            let block = String(rest[begin.lowerBound..<close.upperBound]) + "\n"
            rest = rest[close.upperBound...]
            // grapheme-ok: the label is compared whole with ASCII names; a mark glued to a `-` only makes it unequal
            let label = block.dropFirst("-----BEGIN ".count).prefix(while: { $0 != "-" })
            guard label == "PUBLIC KEY" || label == "RSA PUBLIC KEY" || label == "CERTIFICATE" else {
                throw AuthError(.noKeys, "unsupported PEM block '\(label)' (expected public keys or certificates)")
            }
            do {
                keys.append(VerificationKey(keyID: nil, publicKey: try PublicKey(pem: block)))
            } catch {
                throw AuthError(.noKeys, "PEM block \(keys.count + 1): \(error)")
            }
        }
        return KeySet(keys: keys)
    }

    static func parseCertificateMap(_ object: [String: JSONValue]) throws(AuthError) -> KeySet {
        var keys: [VerificationKey] = []
        for kid in object.keys.sorted(by: { $0.bytesLess(than: $1) }) {
            guard let pem = object[exactly: kid]?.stringValue, pem.contains("-----BEGIN CERTIFICATE-----") else {
                throw AuthError(.noKeys, "x509 map entry '\(kid)' is not a PEM certificate")
            }
            do { keys.append(VerificationKey(keyID: kid, publicKey: try PublicKey(pem: pem))) } catch {
                throw AuthError(.noKeys, "x509 map entry '\(kid)': \(error)")
            }
        }
        return KeySet(keys: keys)
    }

    static func parseJWKS(_ value: JSONValue) throws(AuthError) -> KeySet {
        guard let entries = value.arrayValue else { throw AuthError(.noKeys, "JWKS 'keys' is not an array") }
        var keys: [VerificationKey] = []
        var skipped: [String] = []
        var seen = Set<ExactString>()
        for (i, entry) in entries.enumerated() {
            guard let jwk = entry.objectValue else { skipped.append("entry \(i) is not an object"); continue }
            guard let kid = jwk["kid"]?.stringValue, !kid.isEmpty else {
                skipped.append("entry \(i) has no kid"); continue
            }
            guard !seen.contains(ExactString(kid)) else { skipped.append("duplicate kid '\(kid)'"); continue }
            if let use = jwk["use"]?.stringValue, use != "sig" { skipped.append("'\(kid)' is for \(use)"); continue }
            var algorithm: JWTAlgorithm?
            if let alg = jwk["alg"]?.stringValue {
                guard let known = JWTAlgorithm(rawValue: alg), !known.isHMAC else {
                    skipped.append("'\(kid)' has unsupported alg \(alg)"); continue
                }
                algorithm = known
            }
            do {
                let key: PublicKey
                switch jwk["kty"]?.stringValue {
                case "RSA":
                    guard let n = jwk["n"]?.stringValue.flatMap({ Base64URL.decode($0) }),
                        let e = jwk["e"]?.stringValue.flatMap({ Base64URL.decode($0) })
                    else { skipped.append("'\(kid)' has invalid n/e"); continue }
                    key = try PublicKey(rsaModulus: n, exponent: e)
                case "EC":
                    guard let crv = jwk["crv"]?.stringValue, let curve = ECCurve(rawValue: crv), curve != .p521,
                        let x = jwk["x"]?.stringValue.flatMap({ Base64URL.decode($0) }),
                        let y = jwk["y"]?.stringValue.flatMap({ Base64URL.decode($0) })
                    else { skipped.append("'\(kid)' has an unsupported curve or invalid x/y"); continue }
                    key = try PublicKey(curve: curve, x: x, y: y)
                default:
                    skipped.append("'\(kid)' has unsupported kty"); continue
                }
                let verificationKey = VerificationKey(keyID: kid, publicKey: key, algorithm: algorithm)
                guard !verificationKey.allowedAlgorithms.isEmpty else {
                    skipped.append("'\(kid)': alg does not match the key type"); continue
                }
                keys.append(verificationKey)
                seen.insert(ExactString(kid))
            } catch {
                skipped.append("'\(kid)': \(error)")
            }
        }
        return KeySet(keys: keys, skipped: skipped)
    }
}
