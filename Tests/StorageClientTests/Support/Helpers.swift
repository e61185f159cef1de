import Foundation
import PortcullisCore

extension Array where Element == UInt8 {
    var data: Data { Data(self) }
}

enum JSONDecoderShim {
    static func parse(_ text: String) throws -> JSONValue { try JSONValue.parse(text) }
}

/// Deterministic pseudo-random bytes (xorshift), so large bodies are cheap to make and to compare.
func patternedData(count: Int, seed: UInt64) -> Data {
    var state = seed | 1
    var data = Data(count: count)
    data.withUnsafeMutableBytes { raw in
        let words = raw.bindMemory(to: UInt64.self)
        for i in 0..<words.count {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            words[i] = state
        }
        for i in (words.count * 8)..<count { raw[i] = UInt8(truncatingIfNeeded: i) }
    }
    return data
}

/// Records events from task observers (which run on other threads).
final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [String] = []
    func add(_ event: String) { lock.withLock { events.append(event) } }
    var all: [String] { lock.withLock { events } }
    func count(_ event: String) -> Int { lock.withLock { events.filter { $0 == event }.count } }
}

/// Waits (polling, bounded) until `condition` holds.
func eventually(timeout: TimeInterval = 20, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 10_000_000)
    }
    return condition()
}
