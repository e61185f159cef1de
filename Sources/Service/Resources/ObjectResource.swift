public import PortcullisCore

/// The Cloud Storage JSON API object resource (`storage#object`), rendered from `ObjectMetadata`: the body of
/// change events (DESIGN §11), and the shape a JSON API surface answers with. Wire-neutral on purpose — it
/// lives below the surfaces so the service's events and any surface share one rendering.
///
/// Numbers that GCS sends as strings (`generation`, `metageneration`, `size`) are strings; timestamps are
/// RFC 3339 with milliseconds; absent optional fields are omitted. Download tokens are custom metadata under
/// `firebaseStorageDownloadTokens` (comma-joined), exactly where Firebase keeps them in Cloud Storage.
public enum ObjectResource {
    /// Where `selfLink` and `mediaLink` point; omitted when nil.
    public struct Links: Sendable, Equatable {
        /// The JSON API base, e.g. `https://storage.googleapis.com` (no trailing slash).
        public var base: String
        public init(base: String) { self.base = base }
    }

    /// The resource as compact JSON bytes, keys in a fixed order, custom metadata keys in byte order.
    public static func json(_ m: ObjectMetadata, links: Links? = nil) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(640)
        out.append(contentsOf: #"{"kind":"storage#object","id":"#.utf8)
        JSONValue.encodeString("\(m.bucket)/\(m.name)/\(m.generation)", into: &out)
        if let links {
            let encodedName = PercentEncoding.unreserved.encode(m.name)
            field(#","selfLink":"#, "\(links.base)/storage/v1/b/\(m.bucket)/o/\(encodedName)", &out)
            field(#","mediaLink":"#,
                  "\(links.base)/download/storage/v1/b/\(m.bucket)/o/\(encodedName)?generation=\(m.generation)&alt=media",
                  &out)
        }
        field(#","name":"#, m.name, &out)
        field(#","bucket":"#, m.bucket, &out)
        number(#","generation":""#, m.generation, &out)
        number(#","metageneration":""#, m.metageneration, &out)
        field(#","contentType":"#, m.contentType, &out)
        field(#","storageClass":"#, m.storageClass, &out)
        number(#","size":""#, m.size, &out)
        field(#","md5Hash":"#, m.md5Hash, &out)
        field(#","crc32c":"#, m.crc32c, &out)
        field(#","etag":"#, m.etag, &out)
        time(#","timeCreated":""#, m.timeCreated, &out)
        time(#","updated":""#, m.updated, &out)
        time(#","timeStorageClassUpdated":""#, m.timeCreated, &out)
        field(#","contentEncoding":"#, m.contentEncoding, &out)
        field(#","contentDisposition":"#, m.contentDisposition, &out)
        field(#","contentLanguage":"#, m.contentLanguage, &out)
        field(#","cacheControl":"#, m.cacheControl, &out)
        if !m.customMetadata.isEmpty || !m.downloadTokens.isEmpty {
            out.append(contentsOf: #","metadata":{"#.utf8)
            var first = true
            for (key, value) in m.customMetadata.sorted(by: { $0.key.bytesLess(than: $1.key) }) {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                JSONValue.encodeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                JSONValue.encodeString(value, into: &out)
            }
            if !m.downloadTokens.isEmpty {
                if !first { out.append(UInt8(ascii: ",")) }
                JSONValue.encodeString(ObjectMetadata.downloadTokensKey, into: &out)
                out.append(UInt8(ascii: ":"))
                JSONValue.encodeString(m.downloadTokens.joined(separator: ","), into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    private static func field(_ prefix: StaticString, _ value: String?, _ out: inout [UInt8]) {
        guard let value else { return }
        out.append(contentsOf: UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount))
        JSONValue.encodeString(value, into: &out)
    }

    private static func number(_ prefix: StaticString, _ value: Int64, _ out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount))
        DecimalText.append(value, to: &out)
        out.append(UInt8(ascii: "\""))
    }

    private static func time(_ prefix: StaticString, _ value: Timestamp, _ out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount))
        value.append(fractionDigits: 3, to: &out)
        out.append(UInt8(ascii: "\""))
    }
}
