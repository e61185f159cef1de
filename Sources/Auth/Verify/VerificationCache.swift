import PortcullisCore
import Synchronization

/// A bounded LRU of verified tokens keyed by the token's SHA-256, each valid until its `validUntil`.
///
/// A hit costs one lock and one dictionary lookup, no signature check. Entries verified with a key that has
/// left the key set are dropped by `retain(fingerprints:)`. Thread-safe.
final class VerificationCache: Sendable {
    private struct Entry {
        var digest: CredentialDigest
        var token: VerifiedToken
        var previous: Int
        var next: Int
    }

    private struct State {
        var index: [CredentialDigest: Int] = [:]
        var entries: [Entry] = []
        var free: [Int] = []
        /// Most recently used entry, or -1.
        var head = -1
        /// Least recently used entry, or -1.
        var tail = -1

        mutating func unlink(_ i: Int) {
            let p = entries[i].previous, n = entries[i].next
            if p >= 0 { entries[p].next = n } else { head = n }
            if n >= 0 { entries[n].previous = p } else { tail = p }
        }

        mutating func pushFront(_ i: Int) {
            entries[i].previous = -1
            entries[i].next = head
            if head >= 0 { entries[head].previous = i }
            head = i
            if tail < 0 { tail = i }
        }

        mutating func remove(_ i: Int) {
            unlink(i)
            index.removeValue(forKey: entries[i].digest)
            free.append(i)
        }
    }

    let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int) { self.capacity = max(0, capacity) }

    var count: Int { state.withLock { $0.index.count } }

    func lookup(_ digest: CredentialDigest, now: Int64) -> VerifiedToken? {
        state.withLock { s in
            guard let i = s.index[digest] else { return nil }
            guard now < s.entries[i].token.validUntil else {
                s.remove(i)
                return nil
            }
            if s.head != i {
                s.unlink(i)
                s.pushFront(i)
            }
            return s.entries[i].token
        }
    }

    func insert(_ digest: CredentialDigest, _ token: VerifiedToken) {
        guard capacity > 0 else { return }
        state.withLock { s in
            if let i = s.index[digest] {
                s.entries[i].token = token
                s.unlink(i)
                s.pushFront(i)
                return
            }
            if s.index.count >= capacity, s.tail >= 0 { s.remove(s.tail) }
            let entry = Entry(digest: digest, token: token, previous: -1, next: -1)
            let i: Int
            if let slot = s.free.popLast() {
                s.entries[slot] = entry
                i = slot
            } else {
                s.entries.append(entry)
                i = s.entries.count - 1
            }
            s.index[digest] = i
            s.pushFront(i)
        }
    }

    /// Drops every entry verified by a key whose fingerprint is not in `fingerprints` (key rotation/removal).
    /// The HMAC secret's entries stay (it does not come from the key source).
    func retain(fingerprints: Set<String>) {
        state.withLock { s in
            var i = s.head
            while i >= 0 {
                let next = s.entries[i].next
                let fingerprint = s.entries[i].token.keyFingerprint
                if fingerprint != "hmac" && !fingerprints.contains(fingerprint) { s.remove(i) }
                i = next
            }
        }
    }

    func removeAll() { state.withLock { $0 = State() } }
}
