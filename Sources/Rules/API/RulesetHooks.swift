internal import Synchronization

/// Where `debug()` output and run-time warnings go, plus the "warn once" memory shared by copies of a Ruleset.
struct RulesetHooks: Sendable {
    enum OnceWarning: UInt8 {
        case firestore = 1
        case listUnderV1 = 2
    }

    var debugHandler: (@Sendable (String) -> Void)?
    var warningHandler: (@Sendable (String) -> Void)?
    let warned: WarnedFlags

    init(
        debugHandler: (@Sendable (String) -> Void)? = nil, warningHandler: (@Sendable (String) -> Void)? = nil,
        warned: WarnedFlags = WarnedFlags()
    ) {
        self.debugHandler = debugHandler
        self.warningHandler = warningHandler
        self.warned = warned
    }

    func debug(_ text: String) { debugHandler?(text) }

    func warnOnce(_ which: OnceWarning, _ text: String) {
        guard let warningHandler else { return }
        let old = warned.bits.bitwiseOr(which.rawValue, ordering: .relaxed).oldValue
        if old & which.rawValue == 0 { warningHandler(text) }
    }
}

/// Bits of warnings already emitted.
final class WarnedFlags: Sendable {
    let bits = Atomic<UInt8>(0)
    init() {}
}
