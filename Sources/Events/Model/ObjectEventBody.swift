public import CloudStorageWire
import Crypto
public import PortcullisCore

extension ChangeEvent {
    /// A committed change rendered as Cloud Storage sends it (docs/events.md): a fresh UUID `id`, the object's
    /// bucket and name, the commit time, and the `storage#object` resource as the body — the same field list
    /// the JSON API surface answers with, `selfLink` and `mediaLink` included when `links` is given (Cloud
    /// Storage's events carry both, and trigger code reads `mediaLink` to fetch the bytes).
    public static func cloudStorage(
        _ kind: ChangeKind, of object: ObjectMetadata, at time: Timestamp, links: ObjectResource.Links? = nil
    ) -> ChangeEvent {
        ChangeEvent(
            id: SecureRandom.uuidString(), kind: kind, bucket: object.bucket, name: object.name, time: time,
            body: ObjectResource.json(object, links: links))
    }
}
