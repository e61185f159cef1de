import Crypto
import PortcullisCore

/// A JWS compact token that passed the structural checks: exactly three strict base64url segments, a JSON header
/// naming a supported `alg`, an optional string `kid`, no `crit`, and `typ` absent or `JWT`.
///
/// Nothing here is trusted yet: the header is read only to choose the key and pin the algorithm.
struct CompactToken {
    /// The whole token (ASCII), for libjwt.
    let text: [UInt8]
    /// `header.payload`, the bytes the signature covers.
    let signingInput: ArraySlice<UInt8>
    let algorithm: JWTAlgorithm
    let keyID: String?
    let payload: [UInt8]
    let signature: [UInt8]

    static func parse(_ token: [UInt8]) throws(AuthError) -> CompactToken {
        var dots: [Int] = []
        for (i, byte) in token.enumerated() where byte == UInt8(ascii: ".") {
            dots.append(i)
            if dots.count > 2 { break }
        }
        guard dots.count == 2 else {
            throw AuthError(.malformed, "token must have 3 dot-separated segments")
        }
        let header = token[..<dots[0]], body = token[(dots[0] + 1)..<dots[1]], sig = token[(dots[1] + 1)...]
        guard !header.isEmpty, !body.isEmpty else { throw AuthError(.malformed, "empty token segment") }
        guard let headerBytes = header.withUnsafeBytes({ Base64URL.decode(bytes: $0) }) else {
            throw AuthError(.malformed, "header is not base64url")
        }
        guard let headerJSON = try? JSONValue.parse(headerBytes), let fields = headerJSON.objectValue else {
            throw AuthError(.malformed, "header is not a JSON object")
        }
        guard let alg = fields["alg"]?.stringValue else { throw AuthError(.malformed, "header has no alg") }
        guard let algorithm = JWTAlgorithm(rawValue: alg) else {
            throw AuthError(
                .algorithmNotAllowed, alg == "none" ? "unsigned tokens (alg none) are refused" : "unsupported alg")
        }
        var keyID: String?
        if let kid = fields["kid"] {
            guard let text = kid.stringValue else { throw AuthError(.malformed, "kid is not a string") }
            keyID = text
        }
        if let typ = fields["typ"] {
            guard let text = typ.stringValue, text.bytesEqualIgnoringASCIICase("jwt") else {
                throw AuthError(.malformed, "typ must be JWT")
            }
        }
        guard fields["crit"] == nil else { throw AuthError(.malformed, "critical header extensions are not supported") }
        guard let payload = body.withUnsafeBytes({ Base64URL.decode(bytes: $0) }) else {
            throw AuthError(.malformed, "payload is not base64url")
        }
        guard !sig.isEmpty else { throw AuthError(.badSignature, "signature is empty") }
        guard let signature = sig.withUnsafeBytes({ Base64URL.decode(bytes: $0) }) else {
            throw AuthError(.malformed, "signature is not base64url")
        }
        return CompactToken(
            text: token, signingInput: token[..<dots[1]], algorithm: algorithm, keyID: keyID, payload: payload,
            signature: signature)
    }
}
