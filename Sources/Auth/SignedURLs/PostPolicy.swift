import Crypto
public import PortcullisCore

/// Google's V4 POST policy (browser form uploads, "POST Object" with `policy`): the signature over the
/// base64 policy document, its expiration, and its conditions against the form's fields. Pure.
///
/// The policy is `{"conditions": [...], "expiration": "RFC 3339"}`, base64-encoded in the `policy` field; the
/// signature (`x-goog-signature`, hex) is RSA-SHA256 — or for `GOOG4-HMAC-SHA256` HMAC under the V4 derived key —
/// over the base64 text. Conditions: `{"field": "value"}` and `["eq", "$field", "value"]` (exact),
/// `["starts-with", "$field", "prefix"]`, `["content-length-range", min, max]`. Every form field but
/// `x-goog-signature`, `policy`, `file` and `x-ignore-*` must be named by a condition, and every condition must
/// hold; `bucket` is the bucket of the URL.
public enum PostPolicy {
    /// What an accepted policy allows for the file.
    public struct Accepted: Sendable {
        public let signer: String
        /// `content-length-range`, when given.
        public let sizeRange: ClosedRange<Int64>?
    }

    /// `fields` are the form's fields before the file, names lower-cased.
    public static func verify(
        fields: [(name: String, value: String)], bucket: String, now: Int64, key: (String) -> SignedURLKey?
    ) throws(SignedURLError) -> Accepted {
        func invalid(_ text: String) -> SignedURLError { SignedURLError(kind: .invalid, message: text) }
        func field(_ name: String) -> String? { fields.first { $0.name.bytesEqual(name) }?.value }
        guard let algorithm = field("x-goog-algorithm"), let credential = field("x-goog-credential"),
            let date = field("x-goog-date"), let signatureHex = field("x-goog-signature"),
            let policyText = field("policy")
        else {
            throw invalid(
                "A policy upload needs policy, x-goog-algorithm, x-goog-credential, x-goog-date, x-goog-signature.")
        }
        let isHMAC = algorithm.bytesEqual("GOOG4-HMAC-SHA256")
        guard isHMAC || algorithm.bytesEqual("GOOG4-RSA-SHA256") else {
            throw invalid("Unsupported x-goog-algorithm: GOOG4-RSA-SHA256 or GOOG4-HMAC-SHA256.")
        }
        let scope = credential.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
        guard scope.count == 5, date.utf8.prefix(8).elementsEqual(scope[1].utf8) else {
            throw invalid("x-goog-credential must be ID/DATE/LOCATION/storage/goog4_request for x-goog-date.")
        }
        guard let signature = HexText.decode(signatureHex) else {
            throw invalid("x-goog-signature is not hex.")
        }
        let signed = Array(policyText.utf8)
        let verified: Bool
        switch key(scope[0]) {
        case .hmac(let secret)? where isHMAC:
            var derived = Array("GOOG4".utf8) + secret
            for part in scope[1...] { derived = HMAC.sha256(key: derived, data: Array(part.utf8)) }
            verified = ConstantTime.equals(HMAC.sha256(key: derived, data: signed), signature)
        case let rsa? where !isHMAC: verified = rsa.verifiesRSA(signature, signed)
        default: verified = false
        }
        guard verified else {
            throw SignedURLError(
                kind: .mismatch,
                message: "The request signature we calculated does not match the signature you provided.")
        }
        guard let decoded = Base64.decode(policyText), let policy = try? JSONValue.parse(decoded),
            let expirationText = policy["expiration"]?.stringValue, let conditions = policy["conditions"]?.arrayValue
        else { throw invalid("The policy is not a base64 JSON document with expiration and conditions.") }
        guard let expiration = Timestamp(rfc3339: expirationText) else {
            throw invalid("The policy's expiration is not an RFC 3339 time.")
        }
        guard now < expiration.secondsSinceEpoch else {
            throw SignedURLError(kind: .expired, message: "Policy expired: \(expirationText)")
        }
        var covered: [String] = ["bucket"]
        var sizeRange: ClosedRange<Int64>?
        func value(_ name: String) -> String? { name.bytesEqual("bucket") ? bucket : field(name) }
        for condition in conditions {
            if let object = condition.objectValue {
                guard object.count == 1, let (name, expected) = object.first, let text = expected.stringValue else {
                    throw invalid("A policy condition object names one field and its string value.")
                }
                let lowered = name.lowercased()
                guard value(lowered)?.bytesEqual(text) == true else {
                    throw invalid("Policy condition failed: \(lowered) must equal the policy's value.")
                }
                covered.append(lowered)
                continue
            }
            guard let parts = condition.arrayValue, let op = parts.first?.stringValue else {
                throw invalid("Unsupported policy condition.")
            }
            if op.bytesEqual("content-length-range") {
                guard parts.count == 3, let low = parts[1].int64Value, let high = parts[2].int64Value, low <= high,
                    low >= 0
                else { throw invalid("content-length-range takes two sizes.") }
                sizeRange = low...high
                continue
            }
            guard parts.count == 3, let reference = parts[1].stringValue, reference.hasPrefix("$"),
                let operand = parts[2].stringValue
            else { throw invalid("Unsupported policy condition.") }
            let name = String(reference.dropFirst()).lowercased()
            let actual = value(name) ?? ""
            if op.bytesEqual("eq") {
                guard actual.bytesEqual(operand) else {
                    throw invalid("Policy condition failed: \(name) must equal the policy's value.")
                }
            } else if op.bytesEqual("starts-with") {
                guard actual.utf8.starts(with: operand.utf8) else {
                    throw invalid("Policy condition failed: \(name) must start with the policy's prefix.")
                }
            } else {
                throw invalid("Unsupported policy condition \(op).")
            }
            covered.append(name)
        }
        for (name, _) in fields {
            let exempt =
                name.bytesEqual("x-goog-signature") || name.bytesEqual("policy") || name.bytesEqual("file")
                || name.utf8.starts(with: "x-ignore-".utf8)
            guard exempt || covered.contains(where: { $0.bytesEqual(name) }) else {
                throw invalid("The form field \(name) is not covered by the policy's conditions.")
            }
        }
        return Accepted(signer: scope[0], sizeRange: sizeRange)
    }
}
