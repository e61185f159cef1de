public import PortcullisCore

/// The Cloud Storage JSON API object resource (`storage#object`), rendered from `ObjectMetadata`: the shape the
/// JSON API surface answers with, and the body of change events (docs/events.md). It lives in this wire target,
/// below both, so the surface and the events share one field list; the service never renders it.
///
/// Numbers that GCS sends as strings (`generation`, `metageneration`, `size`) are strings; timestamps are
/// RFC 3339 with milliseconds; absent optional fields are omitted. Download tokens are custom metadata under
/// `firebaseStorageDownloadTokens` (comma-joined), exactly where Firebase keeps them in Cloud Storage.
public enum ObjectResource {
    /// Where `selfLink` and `mediaLink` point; omitted when nil. The base is the caller's (the surface's public
    /// URL); the `/storage/v1` and `/download/storage/v1` paths under it are the JSON API's.
    public struct Links: Sendable, Equatable {
        /// The JSON API base, e.g. `https://storage.googleapis.com` (no trailing slash).
        public var base: String
        public init(base: String) { self.base = base }
    }

    /// The resource as compact JSON bytes, custom metadata keys in byte order.
    public static func json(_ m: ObjectMetadata, links: Links? = nil) -> [UInt8] {
        var w = JSONObjectWriter(mask: nil, capacity: 640)
        write(m, links: links, into: &w)
        return w.finish()
    }

    /// The members of the resource, written through `w` (whose `fields` mask, if any, selects among them): the
    /// one field list both the JSON API surface and change events render. `fullProjection` (`projection=full`)
    /// adds `owner`, the one member of Cloud Storage's ACL model that is kept.
    public static func write(
        _ m: ObjectMetadata, links: Links?, fullProjection: Bool = false, into w: inout JSONObjectWriter
    ) {
        w.string("kind", "storage#object")
        w.string("id") { out in
            JSONValue.appendEscaped(m.bucket, into: &out)
            out.append(UInt8(ascii: "/"))
            JSONValue.appendEscaped(m.name, into: &out)
            out.append(UInt8(ascii: "/"))
            DecimalText.append(m.generation, to: &out)
        }
        if let links {
            // Percent-encoded names need no JSON escape; the base is configuration and is escaped.
            func objectLink(_ root: StaticString, into out: inout [UInt8]) {
                JSONValue.appendEscaped(links.base, into: &out)
                out.append(contentsOf: UnsafeBufferPointer(start: root.utf8Start, count: root.utf8CodeUnitCount))
                PercentEncoding.uriComponent.append(m.bucket, to: &out)
                out.append(contentsOf: "/o/".utf8)
                PercentEncoding.uriComponent.append(m.name, to: &out)
            }
            w.string("selfLink") { objectLink("/storage/v1/b/", into: &$0) }
            w.string("mediaLink") { out in
                objectLink("/download/storage/v1/b/", into: &out)
                out.append(contentsOf: "?generation=".utf8)
                DecimalText.append(m.generation, to: &out)
                out.append(contentsOf: "&alt=media".utf8)
            }
        }
        w.string("name", m.name)
        w.string("bucket", m.bucket)
        w.decimal("generation", m.generation)
        w.decimal("metageneration", m.metageneration)
        w.string("contentType", m.contentType)
        w.string("storageClass", m.storageClass)
        w.decimal("size", m.size)
        w.string("md5Hash", m.md5Hash)
        w.string("crc32c", m.crc32c)
        w.string("etag") { out in  // `m.etag`, without building the String
            DecimalText.append(m.generation, to: &out)
            out.append(UInt8(ascii: "/"))
            DecimalText.append(m.metageneration, to: &out)
        }
        w.timestamp("timeCreated", m.timeCreated)
        w.timestamp("updated", m.updated)
        w.timestamp("timeStorageClassUpdated", m.timeCreated)
        w.string("contentEncoding", m.contentEncoding)
        w.string("contentDisposition", m.contentDisposition)
        w.string("contentLanguage", m.contentLanguage)
        w.string("cacheControl", m.cacheControl)
        w.timestamp("customTime", m.customTime, keepingPrecision: true)
        w.timestamp("timeDeleted", m.timeDeleted)
        w.stringMap("metadata", m.customMetadata, joined: (ObjectMetadata.downloadTokensKey, m.downloadTokens))
        if fullProjection, let owner = m.owner {
            w.nested("owner") { out, mask in
                var inner = JSONObjectWriter(mask: mask, capacity: 64 + 2 * owner.utf8.count)
                inner.string("entity", owner)
                if owner.bytesHasPrefix("user-") {
                    inner.string("entityId", String(decoding: owner.utf8.dropFirst(5), as: UTF8.self))
                }
                out += inner.finish()
            }
        }
    }
}
