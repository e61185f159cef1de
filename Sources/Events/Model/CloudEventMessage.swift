public import PortcullisCore

/// A `ChangeEvent` as an HTTP request in CloudEvents 1.0 binary content mode, with the attributes Cloud
/// Storage gives its object events (docs/events.md):
///
/// ```
/// ce-specversion: 1.0
/// ce-id: <event id>
/// ce-type: google.cloud.storage.object.v1.finalized | metadataUpdated | deleted | archived
/// ce-source: //storage.googleapis.com/projects/_/buckets/<bucket>
/// ce-subject: objects/<name>
/// ce-time: <commit time, RFC 3339>
/// Content-Type: application/json
/// Portcullis-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>   (when a secret is set)
/// ```
///
/// Attribute values are percent-encoded as the CloudEvents HTTP binding asks (space, `"`, `%` and every byte
/// outside printable ASCII), so an object name with spaces or non-ASCII characters stays a valid header; the
/// body carries the exact name.
public enum CloudEventMessage {
    /// The request headers for delivering `event` at `sentAt` (the signature's timestamp).
    public static func headers(for event: ChangeEvent, signer: EventSigner?, sentAt: Timestamp) -> [(String, String)] {
        var headers: [(String, String)] = [
            ("ce-specversion", "1.0"),
            ("ce-id", headerValue(event.id)),
            ("ce-type", event.kind.cloudEventType),
            ("ce-source", headerValue(source(bucket: event.bucket))),
            ("ce-subject", headerValue("objects/" + event.name)),
            ("ce-time", event.time.rfc3339Milliseconds),
            ("Content-Type", "application/json"),
        ]
        if let signer {
            headers.append((EventSigner.headerName, signer.signature(body: event.body, at: sentAt.secondsSinceEpoch)))
        }
        return headers
    }

    /// The CloudEvents `source` of a bucket's object events.
    public static func source(bucket: String) -> String { "//storage.googleapis.com/projects/_/buckets/\(bucket)" }

    /// Percent-encodes what the CloudEvents HTTP binding (§3.1.3.2) requires of a header value: space, `"`,
    /// `%` and every byte outside U+0021…U+007E, as UTF-8 with upper-case hex.
    public static func headerValue(_ text: String) -> String {
        let bytes = text.utf8
        guard bytes.contains(where: needsEncoding) else { return text }
        var out = [UInt8]()
        out.reserveCapacity(bytes.count + 16)
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in bytes {
            if needsEncoding(byte) {
                out.append(UInt8(ascii: "%"))
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            } else {
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func needsEncoding(_ byte: UInt8) -> Bool {
        byte < 0x21 || byte > 0x7E || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "%")
    }
}
