public import PortcullisCore

/// A backend whose calls go to an upstream service (GCS, S3) and can carry a request's trace there.
///
/// The service binds the backend to each traced request once (`traced(by:)`) and calls the bound copy for that
/// request: every upstream request the copy sends carries `traceparent`/`tracestate` and records one client
/// span per attempt (`UpstreamRequest.trace`). The trace travels as a value, down the calls — the backend
/// protocol's methods stay as they are, and backends without an upstream (embedded) never see it.
public protocol UpstreamTraced: StorageBackend {
    /// A backend sharing this one's client, credentials and settings whose upstream calls carry `trace`.
    func traced(by trace: Trace) -> any StorageBackend
}
