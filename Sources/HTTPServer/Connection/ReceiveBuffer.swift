/// The bytes read from a socket and not yet parsed. A raw, growable buffer so `read(2)` writes straight
/// into it (no intermediate copy). Confined to its connection's event loop.
///
/// Bounded by use, not by a cap: while a head is read the parser consumes everything it is given, and the
/// socket is read for body bytes only while the responder pulls, one read at a time.
final class ReceiveBuffer {
    private(set) var base: UnsafeMutableRawPointer
    private(set) var capacity: Int
    private var readIndex = 0
    private var writeIndex = 0
    /// The peer closed its side, or the socket failed: no byte will follow the readable ones.
    var endOfInput = false

    init(capacity: Int = 4096) {
        self.capacity = capacity
        base = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
    }

    deinit { if capacity > 0 { base.deallocate() } }

    /// What an empty buffer points at: no allocation (`malloc(0)` would still cost a 32-byte chunk per idle
    /// connection). Never written: `writable(minimum:)` allocates before handing out any room.
    nonisolated(unsafe) private static let emptyBase = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 16)

    var readableCount: Int { writeIndex - readIndex }
    var isEmpty: Bool { readIndex == writeIndex }
    var readable: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base + readIndex, count: writeIndex - readIndex)
    }

    func consume(_ count: Int) {
        readIndex += count
        if readIndex == writeIndex { readIndex = 0; writeIndex = 0 }
    }

    /// Makes room for at least `minimum` bytes after the readable ones and returns the writable region.
    func writable(minimum: Int) -> UnsafeMutableRawBufferPointer {
        if capacity - writeIndex < minimum {
            let count = readableCount
            if readIndex > 0 && capacity - count >= minimum {
                (base).copyMemory(from: base + readIndex, byteCount: count)
            } else {
                let newCapacity = max(capacity * 2, count + minimum)
                let newBase = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
                newBase.copyMemory(from: base + readIndex, byteCount: count)
                if capacity > 0 { base.deallocate() }
                base = newBase
                capacity = newCapacity
            }
            readIndex = 0
            writeIndex = count
        }
        return UnsafeMutableRawBufferPointer(start: base + writeIndex, count: capacity - writeIndex)
    }

    func didWrite(_ count: Int) { writeIndex += count }

    /// Frees the storage of an empty buffer (an idle keep-alive connection holds none); `writable(minimum:)`
    /// allocates again on the next read.
    func releaseStorage() {
        guard isEmpty, capacity > 0 else { return }
        base.deallocate()
        base = Self.emptyBase
        capacity = 0
    }
}
