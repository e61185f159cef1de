import Synchronization

/// Bytes that transfers of one client may hold beyond a floor, shared by all of them. Two are kept per client:
/// - the response window budget: what response buffers hold beyond their minimum window. One fast download may
///   use its whole buffer, but hundreds of concurrent ones cannot all grow at once (bench S11: 200 concurrent
///   downloads), so memory stays bounded by the number of transfers × the minimum window + this budget;
/// - the bulk budget: what bulk transfers hold beyond normally sized ones (see `ReceiveSizing`).
final class WindowBudget: Sendable {
    private let available: Atomic<Int>

    init(bytes: Int) { available = Atomic(max(0, bytes)) }

    /// Takes `bytes` from the budget if that many are left.
    func acquire(_ bytes: Int) -> Bool {
        var current = available.load(ordering: .relaxed)
        while current >= bytes {
            let (exchanged, original) = available.compareExchange(
                expected: current, desired: current - bytes,
                ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
        return false
    }

    func release(_ bytes: Int) {
        if bytes > 0 { available.add(bytes, ordering: .relaxed) }
    }

    var availableBytes: Int { available.load(ordering: .relaxed) }
}
