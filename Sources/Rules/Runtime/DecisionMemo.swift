internal import PortcullisCore
internal import Synchronization

/// The part of a request a memoised decision depends on: method, bucket, object path and who asks.
///
/// Only built for anonymous callers and for principals that carry a `credentialDigest` (equal digests mean
/// equal uid and claims); a hand-made principal has no cheap identity and is never memoised. Strings are
/// compared by their UTF-8 bytes, never by canonical equivalence.
struct DecisionKey {
    let method: RulesMethod
    /// nil: anonymous.
    let credential: CredentialDigest?
    let bucket: String
    let path: String
    let hash: UInt64

    init?(_ request: borrowing RulesRequest) {
        // Field projections, not `if let auth`: binding would copy the principal (its uid and claims).
        credential = request.auth?.credentialDigest
        if credential == nil, request.auth?.isAdmin != nil { return nil }
        method = request.method
        bucket = request.bucket
        path = request.path
        var hasher = Hasher()
        hasher.combine(MethodSet(method).rawValue)
        if let credential {
            hasher.combine(credential)
        } else {
            hasher.combine(0 as UInt8)
        }
        DecisionKey.combineBytes(of: bucket, into: &hasher)
        DecisionKey.combineBytes(of: path, into: &hasher)
        hash = UInt64(truncatingIfNeeded: hasher.finalize()) | 1  // never 0, which marks an empty slot
    }

    /// The text's UTF-8 bytes and its length (so `("ab", "c")` and `("a", "bc")` differ), in place when the
    /// string is contiguous.
    private static func combineBytes(of text: String, into hasher: inout Hasher) {
        let done: Void? = text.utf8.withContiguousStorageIfAvailable {
            hasher.combine(bytes: UnsafeRawBufferPointer($0))
        }
        if done == nil {
            for byte in text.utf8 { hasher.combine(byte) }
        }
        hasher.combine(text.utf8.count)
    }

    func matches(_ entry: borrowing DecisionMemo.Entry) -> Bool {
        entry.hash == hash && entry.method == method && entry.credential == credential
            && entry.path.sameBytes(path) && entry.bucket.sameBytes(bucket)
    }
}

/// A bounded, thread-safe memo of decisions whose evaluation read nothing but the `DecisionKey`'s parts.
///
/// Set-associative: `shardCount` shards, each behind its own lock, hold `setsPerShard` sets of `ways` entries;
/// a key can live only in the set its hash names, and a full set evicts its least recently used entry. So the
/// memo never holds more than `capacity` decisions, a lookup touches one lock and at most `ways` entries, and a
/// flood of distinct keys only evicts. A memo belongs to one compiled ruleset: loading new rules makes a new,
/// empty one (that is its invalidation).
final class DecisionMemo: Sendable {
    struct Entry {
        var hash: UInt64
        var method: RulesMethod
        var credential: CredentialDigest?
        var bucket: String
        var path: String
        var allowed: Bool
        var lastUse: UInt64
    }

    /// One lock's worth of sets. `hashes` is scanned first (0 = empty slot; key hashes are never 0), so a miss
    /// or a hit touches the entries' strings only for the one slot whose hash matches.
    private struct Shard {
        var hashes: [UInt64]
        var entries: [Entry?]
        var tick: UInt64 = 0

        init(slots: Int) {
            hashes = Array(repeating: 0, count: slots)
            entries = Array(repeating: nil, count: slots)
        }
    }

    static let shardCount = 8
    static let ways = 8
    let setsPerShard: Int
    private let shards: [ShardBox]

    private final class ShardBox: Sendable {
        let state: Mutex<Shard>
        init(slots: Int) { state = Mutex(Shard(slots: slots)) }
    }

    /// At most `capacity` decisions (rounded up to a multiple of `shardCount × ways`, at least one set a shard).
    init(capacity: Int) {
        let perShard = max(
            1,
            (capacity + DecisionMemo.shardCount * DecisionMemo.ways - 1)
                / (DecisionMemo.shardCount * DecisionMemo.ways))
        setsPerShard = perShard
        shards = (0..<DecisionMemo.shardCount).map { _ in ShardBox(slots: perShard * DecisionMemo.ways) }
    }

    var capacity: Int { DecisionMemo.shardCount * setsPerShard * DecisionMemo.ways }

    /// Decisions held now (tests, observability).
    var count: Int {
        shards.reduce(0) { sum, shard in sum + shard.state.withLock { $0.entries.count(where: { $0 != nil }) } }
    }

    private func place(_ hash: UInt64) -> (shard: ShardBox, first: Int) {
        let shard = shards[Int(hash % UInt64(DecisionMemo.shardCount))]
        let set = Int((hash / UInt64(DecisionMemo.shardCount)) % UInt64(setsPerShard))
        return (shard, set * DecisionMemo.ways)
    }

    /// The memoised decision for `key`, if any.
    func lookup(_ key: DecisionKey) -> Bool? {
        let (shard, first) = place(key.hash)
        return shard.state.withLock { s in
            for i in first..<(first + DecisionMemo.ways) where s.hashes[i] == key.hash {
                let allowed: Bool? = s.entries.withUnsafeBufferPointer { entries in
                    key.matches(entries[i]!) ? entries[i]!.allowed : nil
                }
                if let allowed {
                    s.tick &+= 1
                    s.entries[i]!.lastUse = s.tick
                    return allowed
                }
            }
            return nil
        }
    }

    /// Remembers `allowed` for `key`, evicting the set's least recently used entry when it is full.
    func insert(_ key: DecisionKey, allowed: Bool) {
        let (shard, first) = place(key.hash)
        shard.state.withLock { s in
            s.tick &+= 1
            var victim = first
            var oldest = UInt64.max
            for i in first..<(first + DecisionMemo.ways) {
                guard let entry = s.entries[i] else {
                    victim = i
                    break
                }
                if key.matches(entry) {
                    victim = i
                    break
                }
                if entry.lastUse < oldest {
                    oldest = entry.lastUse
                    victim = i
                }
            }
            s.hashes[victim] = key.hash
            s.entries[victim] = Entry(
                hash: key.hash, method: key.method, credential: key.credential,
                bucket: key.bucket, path: key.path, allowed: allowed, lastUse: s.tick)
        }
    }
}
