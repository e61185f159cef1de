/// What happened to an object, as the Cloud Storage object event types name it (docs/events.md).
public enum ChangeKind: String, Sendable, CaseIterable, Equatable {
    /// A new generation was committed: a create or an overwrite, by any upload protocol, copy or compose.
    case finalized
    /// The current generation's metadata changed (metageneration + 1).
    case metadataUpdated
    /// A generation stopped being live: a delete, or the generation an overwrite replaced; or a noncurrent
    /// generation of a versioned bucket was deleted by number.
    case deleted
    /// A live generation became noncurrent in a bucket with versioning enabled (an overwrite or a delete):
    /// kept, unlike `deleted`.
    case archived

    /// The CloudEvents `type` Cloud Storage emits for this change.
    public var cloudEventType: String { "google.cloud.storage.object.v1.\(rawValue)" }

    public init?(cloudEventType: String) {
        let prefix = "google.cloud.storage.object.v1."
        guard cloudEventType.hasPrefix(prefix) else { return nil }
        self.init(rawValue: String(cloudEventType.dropFirst(prefix.count)))
    }
}

/// One committed change, rendered and ready to deliver: the CloudEvent's identity and attributes plus its body.
///
/// Built once, when the change commits (inside the commit transaction where the backend has an outbox), and
/// never re-rendered: every delivery attempt of it — to every webhook, after any restart — sends the same `id`
/// and the same `body` bytes.
public struct ChangeEvent: Sendable, Equatable {
    /// The CloudEvent `id`: unique per event, stable across retries.
    public var id: String
    public var kind: ChangeKind
    public var bucket: String
    public var name: String
    /// The commit time (CloudEvent `time`).
    public var time: Timestamp
    /// The object resource as the Cloud Storage JSON API renders it (UTF-8 JSON).
    public var body: [UInt8]

    public init(id: String, kind: ChangeKind, bucket: String, name: String, time: Timestamp, body: [UInt8]) {
        self.id = id
        self.kind = kind
        self.bucket = bucket
        self.name = name
        self.time = time
        self.body = body
    }
}

/// Where the storage service hands events of changes it committed (docs/events.md). The service hands over typed
/// values (what happened to which object, when) and the sink renders them: the wire format of an event's body
/// is the sink's business, not the service's. `publish` and `recorded` are called after the commit returned,
/// never before, and never wait on delivery.
public protocol ChangeEventSink: Sendable {
    /// Renders one committed change as the event to deliver: a fresh `id`, and the body in the sink's wire
    /// format. Called once per change, in commit order — inside the commit transaction on a backend with an
    /// outbox, so it must be quick and must not call back into storage.
    func event(_ kind: ChangeKind, of object: ObjectMetadata, at time: Timestamp) -> ChangeEvent
    /// Events the backend did not record itself (no outbox): queue them for delivery, in order.
    func publish(_ events: [ChangeEvent])
    /// The backend recorded events in its outbox with the commit: deliver them soon.
    func recorded()
}
