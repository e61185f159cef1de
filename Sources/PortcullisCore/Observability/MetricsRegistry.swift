import Synchronization

/// An in-process metrics registry that renders the Prometheus text exposition format 0.0.4.
///
/// Counting is separate from exposing: modules hold `Counter`/`Gauge`/`Histogram` handles (resolved once per
/// label set and cached by the family), and the Gateway serves `render()` on `/metrics`. Label values are
/// route templates, methods, statuses — never raw paths or user input.
public final class MetricsRegistry: Sendable {
    private let families = Mutex<[(name: String, family: any MetricFamily)]>([])

    public init() {}

    public func counter(_ name: String, help: String, labels: [String] = []) -> CounterFamily {
        register(name) { CounterFamily(name: name, help: help, labelNames: labels) }
    }

    public func gauge(_ name: String, help: String, labels: [String] = []) -> GaugeFamily {
        register(name) { GaugeFamily(name: name, help: help, labelNames: labels) }
    }

    public func histogram(_ name: String, help: String, labels: [String] = [], buckets: [Double]) -> HistogramFamily {
        register(name) { HistogramFamily(name: name, help: help, labelNames: labels, buckets: buckets) }
    }

    /// A gauge whose value is computed at scrape time (RSS, open fds, uptime).
    public func gauge(_ name: String, help: String, sample: @escaping @Sendable () -> Double) {
        _ = register(name) { CallbackGauge(name: name, help: help, sample: sample) }
    }

    /// A labelled gauge whose series are computed at scrape time (free disk space per bucket). `samples`
    /// returns one value per label set, in the order of `labels`; its label values must be bounded (configuration,
    /// never request input).
    public func gauge(
        _ name: String, help: String, labels: [String],
        samples: @escaping @Sendable () -> [(labels: [String], value: Double)]
    ) {
        _ = register(name) { LabelledCallbackGauge(name: name, help: help, labelNames: labels, samples: samples) }
    }

    /// Registering a name twice returns the first family (so modules may ask idempotently); a different kind
    /// under the same name is a programming error.
    private func register<F: MetricFamily>(_ name: String, make: () -> F) -> F {
        families.withLock { families in
            if let existing = families.first(where: { $0.name == name }) {
                guard let family = existing.family as? F else {
                    fatalError("metric \(name) registered twice with different kinds")
                }
                return family
            }
            let family = make()
            families.append((name, family))
            return family
        }
    }

    /// The whole registry in Prometheus text format, families in registration order.
    public func render() -> String {
        let snapshot = families.withLock { $0 }
        var out = ""
        out.reserveCapacity(4096)
        for (_, family) in snapshot { family.render(into: &out) }
        return out
    }
}

protocol MetricFamily: AnyObject, Sendable {
    func render(into out: inout String)
}

/// Label values joined into the `{a="x",b="y"}` text once, when the child is created.
private func labelText(_ names: [String], _ values: [String]) -> String {
    guard !names.isEmpty else { return "" }
    var parts: [String] = []
    for (name, value) in zip(names, values) {
        var escaped = ""
        for ch in value.unicodeScalars {
            switch ch {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.unicodeScalars.append(ch)
            }
        }
        parts.append("\(name)=\"\(escaped)\"")
    }
    return "{" + parts.joined(separator: ",") + "}"
}

private func formatValue(_ v: Double) -> String {
    if v.isNaN { return "NaN" }
    if v.isInfinite { return v > 0 ? "+Inf" : "-Inf" }
    if v.rounded() == v && abs(v) < 1e15 { return String(Int64(v)) }
    return "\(v)"
}

/// One loop's part of a sharded value. Written only by its loop's thread (a relaxed load and store: plain
/// moves, no locked instruction), read by any thread. Padded so that the cells of two loops never share a
/// cache line.
final class ShardCell: Sendable {
    let value = Atomic<UInt64>(0)
    private let padding: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)

    @inline(__always) func add(_ amount: UInt64) {
        value.store(value.load(ordering: .relaxed) &+ amount, ordering: .relaxed)
    }

    static func cells() -> [ShardCell] { (0..<LoopShard.capacity).map { _ in ShardCell() } }
}

/// A monotonically increasing count for one label set: a shared atomic for callers off any loop plus one
/// cell per event loop (`increment(by:on:)`), summed when read.
public final class Counter: Sendable {
    private let value = Atomic<UInt64>(0)
    private let cells = ShardCell.cells()
    let labels: String
    init(labels: String) { self.labels = labels }
    /// Any thread: one atomic add on the shared value.
    public func increment(by amount: UInt64 = 1) { value.wrappingAdd(amount, ordering: .relaxed) }
    /// On `shard`'s loop thread only (see `LoopShard`): adds to that loop's own cell; nil takes the shared path.
    @inline(__always) public func increment(by amount: UInt64 = 1, on shard: LoopShard?) {
        guard let shard else { return increment(by: amount) }
        cells[shard.index].add(amount)
    }
    public var current: UInt64 {
        cells.reduce(value.load(ordering: .relaxed)) { $0 &+ $1.value.load(ordering: .relaxed) }
    }
}

/// A value that goes up and down for one label set. Like `Counter`, per-loop changes go to the loop's cell;
/// the value is the sum of the shared part and every cell (so an increment on one loop and the matching
/// decrement elsewhere still net out).
public final class Gauge: Sendable {
    private let value = Atomic<Int64>(0)
    private let cells = ShardCell.cells()
    let labels: String
    init(labels: String) { self.labels = labels }
    public func increment(by amount: Int64 = 1) { value.wrappingAdd(amount, ordering: .relaxed) }
    public func decrement(by amount: Int64 = 1) { value.wrappingSubtract(amount, ordering: .relaxed) }
    /// On `shard`'s loop thread only; nil takes the shared path.
    @inline(__always) public func increment(by amount: Int64 = 1, on shard: LoopShard?) {
        guard let shard else { return increment(by: amount) }
        cells[shard.index].add(UInt64(bitPattern: amount))
    }
    /// On `shard`'s loop thread only; nil takes the shared path.
    @inline(__always) public func decrement(by amount: Int64 = 1, on shard: LoopShard?) {
        guard let shard else { return decrement(by: amount) }
        cells[shard.index].add(UInt64(bitPattern: 0 &- amount))
    }
    /// Sets the shared part (for gauges that are only ever set, never changed per loop).
    public func set(_ newValue: Int64) { value.store(newValue, ordering: .relaxed) }
    public var current: Int64 {
        cells.reduce(value.load(ordering: .relaxed)) { $0 &+ Int64(bitPattern: $1.value.load(ordering: .relaxed)) }
    }
}

/// Observations counted into fixed buckets for one label set: one lock-protected part per event loop (its
/// lock is the loop's own, uncontended but for a scrape) plus a shared part for callers off any loop.
public final class Histogram: Sendable {
    let labels: String
    let bounds: [Double]
    private let shared: Part
    private let parts: [Part]

    private final class Part: Sendable {
        let state: Mutex<(counts: [UInt64], sum: Double, count: UInt64)>
        init(buckets: Int) { state = Mutex((Array(repeating: 0, count: buckets), 0, 0)) }
        // Keeps two loops' locks off one cache line.
        private let padding: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0)
    }

    init(labels: String, bounds: [Double]) {
        self.labels = labels
        self.bounds = bounds
        shared = Part(buckets: bounds.count)
        parts = (0..<LoopShard.capacity).map { _ in Part(buckets: bounds.count) }
    }

    /// Any thread.
    public func observe(_ value: Double) { observe(value, into: shared) }

    /// On `shard`'s loop thread only (see `LoopShard`); nil takes the shared path.
    public func observe(_ value: Double, on shard: LoopShard?) {
        observe(value, into: shard.map { parts[$0.index] } ?? shared)
    }

    private func observe(_ value: Double, into part: Part) {
        let index = bounds.firstIndex(where: { value <= $0 })
        part.state.withLock { s in
            if let index { s.counts[index] += 1 }
            s.sum += value
            s.count += 1
        }
    }

    var snapshot: (counts: [UInt64], sum: Double, count: UInt64) {
        var total = shared.state.withLock { $0 }
        for part in parts {
            part.state.withLock { s in
                for i in s.counts.indices { total.counts[i] += s.counts[i] }
                total.sum += s.sum
                total.count += s.count
            }
        }
        return total
    }
}

/// Children of one metric, one per label-value tuple, created on first use and cached.
public class LabelledFamily<Child: AnyObject & Sendable>: @unchecked Sendable {
    let name: String
    let help: String
    let labelNames: [String]
    private let children = Mutex<[[String]: Child]>([:])
    private let make: @Sendable (String) -> Child

    init(name: String, help: String, labelNames: [String], make: @escaping @Sendable (String) -> Child) {
        self.name = name
        self.help = help
        self.labelNames = labelNames
        self.make = make
    }

    /// The child for these label values (same count and order as the family's label names).
    public func labels(_ values: String...) -> Child { labels(values) }

    public func labels(_ values: [String]) -> Child {
        precondition(values.count == labelNames.count, "metric \(name) takes \(labelNames.count) labels")
        return children.withLock { children in
            if let child = children[values] { return child }
            let child = make(labelText(labelNames, values))
            children[values] = child
            return child
        }
    }

    var sortedChildren: [Child] {
        children.withLock { $0.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map(\.value) }
    }
}

public final class CounterFamily: LabelledFamily<Counter>, MetricFamily, @unchecked Sendable {
    init(name: String, help: String, labelNames: [String]) {
        super.init(name: name, help: help, labelNames: labelNames, make: { Counter(labels: $0) })
    }
    func render(into out: inout String) {
        out += "# HELP \(name) \(help)\n# TYPE \(name) counter\n"
        for child in sortedChildren { out += "\(name)\(child.labels) \(child.current)\n" }
    }
}

public final class GaugeFamily: LabelledFamily<Gauge>, MetricFamily, @unchecked Sendable {
    init(name: String, help: String, labelNames: [String]) {
        super.init(name: name, help: help, labelNames: labelNames, make: { Gauge(labels: $0) })
    }
    func render(into out: inout String) {
        out += "# HELP \(name) \(help)\n# TYPE \(name) gauge\n"
        for child in sortedChildren { out += "\(name)\(child.labels) \(child.current)\n" }
    }
}

public final class HistogramFamily: LabelledFamily<Histogram>, MetricFamily, @unchecked Sendable {
    init(name: String, help: String, labelNames: [String], buckets: [Double]) {
        let bounds = buckets.sorted()
        super.init(name: name, help: help, labelNames: labelNames, make: { Histogram(labels: $0, bounds: bounds) })
    }
    func render(into out: inout String) {
        out += "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
        for child in sortedChildren {
            let (counts, sum, count) = child.snapshot
            // Bucket labels go inside the child's label set: `{route="x",le="0.1"}`.
            let prefix = child.labels.isEmpty ? "{" : String(child.labels.dropLast()) + ","
            var cumulative: UInt64 = 0
            for (bound, n) in zip(child.bounds, counts) {
                cumulative += n
                out += "\(name)_bucket\(prefix)le=\"\(formatValue(bound))\"} \(cumulative)\n"
            }
            out += "\(name)_bucket\(prefix)le=\"+Inf\"} \(count)\n"
            out += "\(name)_sum\(child.labels) \(formatValue(sum))\n"
            out += "\(name)_count\(child.labels) \(count)\n"
        }
    }
}

final class CallbackGauge: MetricFamily {
    let name: String
    let help: String
    let sample: @Sendable () -> Double
    init(name: String, help: String, sample: @escaping @Sendable () -> Double) {
        self.name = name
        self.help = help
        self.sample = sample
    }
    func render(into out: inout String) {
        out += "# HELP \(name) \(help)\n# TYPE \(name) gauge\n\(name) \(formatValue(sample()))\n"
    }
}

final class LabelledCallbackGauge: MetricFamily {
    let name: String
    let help: String
    let labelNames: [String]
    let samples: @Sendable () -> [(labels: [String], value: Double)]
    init(
        name: String, help: String, labelNames: [String],
        samples: @escaping @Sendable () -> [(labels: [String], value: Double)]
    ) {
        self.name = name
        self.help = help
        self.labelNames = labelNames
        self.samples = samples
    }
    func render(into out: inout String) {
        out += "# HELP \(name) \(help)\n# TYPE \(name) gauge\n"
        for sample in samples() {
            out += "\(name)\(labelText(labelNames, sample.labels)) \(formatValue(sample.value))\n"
        }
    }
}
