import CloudStorageWire
import Crypto
import PortcullisCore
import Service

/// The Cloud Storage JSON API's resources on the wire, as GCS renders them: `storage#object`,
/// `storage#objects` (a list page), `storage#bucket`, `storage#rewriteResponse`.
///
/// Object resource: `generation`, `metageneration` and `size` as decimal strings, RFC 3339 timestamps with
/// milliseconds, base64 `md5Hash`/`crc32c`, `id` = `bucket/name/generation`, `selfLink` and `mediaLink` on
/// the gateway's base URL, custom `metadata` with Firebase's download tokens under
/// `firebaseStorageDownloadTokens` (comma-joined), as Firebase keeps them in GCS. The `etag` is the
/// generation/metageneration validator the gateway compares conditions against (the same as on v0).
enum JSONResources {
    static let storageClassDefault = "STANDARD"

    /// `{base}/storage/v1/b/{bucket}/o/{object}` (segments percent-encoded, `/` as `%2F`).
    static func selfLink(base: String, bucket: String, name: String) -> String {
        base + "/storage/v1/b/" + PercentEncoding.uriComponent.encode(bucket) + "/o/"
            + PercentEncoding.uriComponent.encode(name)
    }

    static func object(_ m: ObjectMetadata, base: String, mask: FieldMask?, fullProjection: Bool = false)
        -> [UInt8]
    {
        var w = JSONObjectWriter(mask: mask)
        write(m, base: base, fullProjection: fullProjection, into: &w)
        return w.finish()
    }

    static func write(
        _ m: ObjectMetadata, base: String, fullProjection: Bool = false, into w: inout JSONObjectWriter
    ) {
        ObjectResource.write(m, links: ObjectResource.Links(base: base), fullProjection: fullProjection, into: &w)
    }

    /// What a caller who may list but not read an object sees of it: its name.
    static func writeNameOnly(bucket: String, name: String, into w: inout JSONObjectWriter) {
        w.string("kind", "storage#object")
        w.string("name", name)
        w.string("bucket", bucket)
    }

    /// A list page: `{"kind":"storage#objects","nextPageToken","prefixes","items"}` (empty members left out).
    static func objectList(
        _ page: ListResult, bucket: String, base: String, mask: FieldMask?, fullProjection: Bool = false
    ) -> [UInt8] {
        var w = JSONObjectWriter(mask: mask, capacity: 256 + 700 * page.items.count)
        w.string("kind", "storage#objects")
        w.string("nextPageToken", page.nextPageToken)
        if !page.prefixes.isEmpty {
            w.nested("prefixes") { out, _ in
                out.append(UInt8(ascii: "["))
                for (i, p) in page.prefixes.enumerated() {
                    if i > 0 { out.append(UInt8(ascii: ",")) }
                    JSONValue.encodeString(p, into: &out)
                }
                out.append(UInt8(ascii: "]"))
            }
        }
        if !page.items.isEmpty {
            w.nested("items") { out, itemMask in
                out.append(UInt8(ascii: "["))
                for (i, name) in page.items.enumerated() {
                    if i > 0 { out.append(UInt8(ascii: ",")) }
                    var item = JSONObjectWriter(mask: itemMask)
                    if i < page.objects.count, let meta = page.objects[i] {
                        write(meta, base: base, fullProjection: fullProjection, into: &item)
                    } else {
                        writeNameOnly(bucket: bucket, name: name, into: &item)
                    }
                    out.append(contentsOf: item.finish())
                }
                out.append(UInt8(ascii: "]"))
            }
        }
        return w.finish()
    }

    static func bucket(_ b: BucketInfo, base: String, mask: FieldMask?) -> [UInt8] {
        var w = JSONObjectWriter(mask: mask)
        writeBucket(b, base: base, into: &w)
        return w.finish()
    }

    static func writeBucket(_ b: BucketInfo, base: String, into w: inout JSONObjectWriter) {
        w.string("kind", "storage#bucket")
        w.string("id", b.name)
        w.string("selfLink", base + "/storage/v1/b/" + PercentEncoding.uriComponent.encode(b.name))
        w.decimal("projectNumber", 0)
        w.string("name", b.name)
        w.timestamp("timeCreated", b.timeCreated)
        w.timestamp("updated", b.updated ?? b.timeCreated)
        w.decimal("metageneration", b.metageneration)
        w.string("location", b.location)
        w.string("locationType", b.locationType)
        w.string("storageClass", storageClassDefault)
        w.nested("versioning") { out, _ in
            out.append(contentsOf: (b.versioningEnabled ? #"{"enabled":true}"# : #"{"enabled":false}"#).utf8)
        }
        w.stringMap("labels", b.labels)
        w.string("etag", Base64.encode(etagBytes(metageneration: b.metageneration)))
    }

    /// A bucket's etag changes with its metageneration, as on Cloud Storage (`CAE=` for metageneration 1).
    static func etagBytes(metageneration: Int64) -> [UInt8] {
        // Protocol-buffer varint of field 1: tag byte 0x08, then the metageneration in 7-bit groups.
        var out: [UInt8] = [0x08]
        var value = UInt64(bitPattern: metageneration)
        repeat {
            let low = UInt8(value & 0x7F)
            value >>= 7
            out.append(value == 0 ? low : low | 0x80)
        } while value != 0
        return out
    }

    static func bucketList(_ buckets: [BucketInfo], base: String, mask: FieldMask?) -> [UInt8] {
        var w = JSONObjectWriter(mask: mask)
        w.string("kind", "storage#buckets")
        if !buckets.isEmpty {
            w.nested("items") { out, itemMask in
                out.append(UInt8(ascii: "["))
                for (i, b) in buckets.enumerated() {
                    if i > 0 { out.append(UInt8(ascii: ",")) }
                    var item = JSONObjectWriter(mask: itemMask)
                    writeBucket(b, base: base, into: &item)
                    out.append(contentsOf: item.finish())
                }
                out.append(UInt8(ascii: "]"))
            }
        }
        return w.finish()
    }

    /// `storage#rewriteResponse` of a rewrite done in one call.
    static func rewrite(_ m: ObjectMetadata, base: String, mask: FieldMask?) -> [UInt8] {
        var w = JSONObjectWriter(mask: mask)
        w.string("kind", "storage#rewriteResponse")
        w.decimal("totalBytesRewritten", m.size)
        w.decimal("objectSize", m.size)
        w.bool("done", true)
        w.nested("resource") { out, inner in
            var r = JSONObjectWriter(mask: inner)
            write(m, base: base, into: &r)
            out.append(contentsOf: r.finish())
        }
        return w.finish()
    }
}
