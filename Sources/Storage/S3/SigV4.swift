import Crypto
import PortcullisCore

/// The pieces of AWS Signature V4 that signing (`S3Signer`, our requests to an S3 engine) and verifying (the S3
/// surface, requests signed by clients) must compute alike: a canonical header value and the signing key.
public enum SigV4 {
    /// Appends `value` with leading and trailing spaces and tabs removed and inner runs collapsed to one space,
    /// as SigV4 canonicalises a header value. Cut on bytes, as the clients that sign the value cut it (a space
    /// before a combining mark is still a space).
    public static func appendTrimmed(_ value: String, to out: inout [UInt8]) {
        value.withContiguousUTF8 { bytes in
            var pendingSpace = false
            var wroteAny = false
            for byte in bytes {
                if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") {
                    pendingSpace = wroteAny
                    continue
                }
                if pendingSpace { out.append(UInt8(ascii: " ")) }
                pendingSpace = false
                wroteAny = true
                out.append(byte)
            }
        }
    }

    /// `HMAC(HMAC(HMAC(HMAC("AWS4" + secret, day), region), service), "aws4_request")`: valid for one day, one
    /// region and one service, so callers keep it rather than derive it per request.
    public static func signingKey(
        secret: [UInt8], day: some StringProtocol, region: some StringProtocol, service: some StringProtocol
    ) -> [UInt8] {
        var key = HMAC.sha256(key: Array("AWS4".utf8) + secret, data: Array(day.utf8))
        key = HMAC.sha256(key: key, data: Array(region.utf8))
        key = HMAC.sha256(key: key, data: Array(service.utf8))
        return HMAC.sha256(key: key, data: Array("aws4_request".utf8))
    }
}
