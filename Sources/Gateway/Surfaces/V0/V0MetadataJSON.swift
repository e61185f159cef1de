public import PortcullisCore
import Service

/// The v0 object resource on the wire: the encoding of `ObjectMetadata` (decoding of the writable
/// fields, which the JSON API shares, is `ObjectResourceJSON`).
///
/// Encoding follows the v0 object resource exactly (openapi/portcullis.yaml): `size`/`generation`/`metageneration` as decimal strings, millisecond RFC 3339
/// timestamps, base64 hashes, `downloadTokens` as one comma-joined string, `contentEncoding: "identity"` when
/// unset, and `metadata` omitted when empty. Written by hand (no Foundation) because it is on every response.
public enum V0MetadataJSON {
    /// The full resource, as returned by GET metadata, PATCH and uploads.
    ///
    /// On every metadata GET, so it appends bytes directly: keys are pre-quoted static text, numbers and
    /// timestamps are written digit by digit (no intermediate Strings), only values go through the escaper.
    public static func encode(_ m: ObjectMetadata) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(512)
        out.append(contentsOf: #"{"name":"#.utf8)
        JSONValue.encodeString(m.name, into: &out)
        field(#","bucket":"#, m.bucket, &out)
        out.append(contentsOf: #","generation":""#.utf8)
        DecimalText.append(m.generation, to: &out)
        out.append(contentsOf: #"","metageneration":""#.utf8)
        DecimalText.append(m.metageneration, to: &out)
        out.append(UInt8(ascii: "\""))
        field(#","contentType":"#, m.contentType, &out)
        out.append(contentsOf: #","timeCreated":""#.utf8)
        m.timeCreated.append(fractionDigits: 3, to: &out)
        out.append(contentsOf: #"","updated":""#.utf8)
        m.updated.append(fractionDigits: 3, to: &out)
        out.append(UInt8(ascii: "\""))
        field(#","storageClass":"#, m.storageClass, &out)
        out.append(contentsOf: #","size":""#.utf8)
        DecimalText.append(m.size, to: &out)
        out.append(UInt8(ascii: "\""))
        field(#","md5Hash":"#, m.md5Hash, &out)
        field(#","crc32c":"#, m.crc32c, &out)
        out.append(contentsOf: #","etag":""#.utf8)
        DecimalText.append(m.generation, to: &out)
        out.append(UInt8(ascii: "/"))
        DecimalText.append(m.metageneration, to: &out)
        out.append(UInt8(ascii: "\""))
        field(#","contentEncoding":"#, m.contentEncoding ?? "identity", &out)
        field(#","contentDisposition":"#, m.contentDisposition, &out)
        field(#","contentLanguage":"#, m.contentLanguage, &out)
        field(#","cacheControl":"#, m.cacheControl, &out)
        if !m.downloadTokens.isEmpty {
            out.append(contentsOf: #","downloadTokens":"#.utf8)
            if m.downloadTokens.count == 1 {
                JSONValue.encodeString(m.downloadTokens[0], into: &out)
            } else {
                JSONValue.encodeString(m.downloadTokens.joined(separator: ","), into: &out)
            }
        }
        if !m.customMetadata.isEmpty {
            out.append(contentsOf: #","metadata":{"#.utf8)
            for (i, entry) in m.customMetadata.sorted(by: { $0.key.bytesLess(than: $1.key) }).enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.encodeString(entry.key, into: &out)
                out.append(UInt8(ascii: ":"))
                JSONValue.encodeString(entry.value, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// `prefix` (a pre-quoted `,"key":`) and the escaped value, when there is one.
    @inline(__always)
    private static func field(_ prefix: StaticString, _ value: String?, _ out: inout [UInt8]) {
        guard let value else { return }
        out.append(contentsOf: UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount))
        JSONValue.encodeString(value, into: &out)
    }
}
