import Service
import Synchronization

/// What a service test hands the service to report into, so the test can read what was decided.
final class DecisionRecord: RequestRecording {
    private struct Fields {
        var decision: AccessDecision?
        var objectName: String?
        var principalUID: String?
        var upstreamNanos: UInt64 = 0
    }
    private let fields = Mutex(Fields())

    var decision: AccessDecision? {
        get { fields.withLock { $0.decision } }
        set { fields.withLock { $0.decision = newValue } }
    }
    var objectName: String? {
        get { fields.withLock { $0.objectName } }
        set { fields.withLock { $0.objectName = newValue } }
    }
    var principalUID: String? {
        get { fields.withLock { $0.principalUID } }
        set { fields.withLock { $0.principalUID = newValue } }
    }
    func addUpstreamTime(nanos: UInt64) { fields.withLock { $0.upstreamNanos += nanos } }
}

extension RequestContext {
    /// A context reporting into a fresh `DecisionRecord`, outside any server (no in-place permit).
    static func recorded() -> (RequestContext, DecisionRecord) {
        let record = DecisionRecord()
        return (RequestContext(record: record), record)
    }
}
