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
    /// Where released storage of the block size goes, and new storage comes from first: its loop's spares.
    private let spares: ReceiveBlockSpares?

    /// A buffer holding no storage yet: the first `writable(minimum:)` takes a block.
    init(spares: ReceiveBlockSpares?) {
        self.spares = spares
        base = Self.emptyBase
        capacity = 0
    }

    /// Off the loop the spares are not ours to touch: the storage goes back to the allocator.
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
            } else if capacity == 0, minimum <= ReceiveBlockSpares.blockBytes {
                base = spares?.take() ?? ReceiveBlockSpares.allocateBlock()
                capacity = ReceiveBlockSpares.blockBytes
            } else {
                let newCapacity = max(capacity * 2, count + minimum)
                let newBase = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
                newBase.copyMemory(from: base + readIndex, byteCount: count)
                releaseBase()
                base = newBase
                capacity = newCapacity
            }
            readIndex = 0
            writeIndex = count
        }
        return UnsafeMutableRawBufferPointer(start: base + writeIndex, count: capacity - writeIndex)
    }

    func didWrite(_ count: Int) { writeIndex += count }

    /// Gives up the storage of an empty buffer (an idle keep-alive connection holds none); `writable(minimum:)`
    /// takes a block again on the next read.
    func releaseStorage() {
        guard isEmpty, capacity > 0 else { return }
        releaseBase()
        base = Self.emptyBase
        capacity = 0
    }

    /// Hands `base` to the spares when it is one block and they have room, else to the allocator.
    private func releaseBase() {
        guard capacity > 0 else { return }
        if capacity == ReceiveBlockSpares.blockBytes, let spares, spares.give(base) { return }
        base.deallocate()
    }
}

/// The receive blocks one event loop's idle connections gave back, for the next connection of that loop that
/// reads. A keep-alive connection releases its receive storage after every response (an idle connection holds
/// none: bench S7) and needs it again for the next request. A block is 4 KiB, above glibc's per-thread cache
/// limit (1,032 bytes), so without spares every request took malloc's binned path twice.
///
/// Confined to its loop, like the connections it serves. Holds at most `limit` blocks (128 KiB at the default):
/// what a loop's connections give back between two of its turns, not what a past burst of them once held.
final class ReceiveBlockSpares {
    static let blockBytes = 4096
    let limit: Int
    private var blocks: [UnsafeMutableRawPointer] = []

    init(limit: Int = 32) {
        self.limit = limit
        blocks.reserveCapacity(limit)
    }

    deinit { for block in blocks { block.deallocate() } }

    var count: Int { blocks.count }

    static func allocateBlock() -> UnsafeMutableRawPointer {
        UnsafeMutableRawPointer.allocate(byteCount: blockBytes, alignment: 16)
    }

    /// A spare block, or nil when there is none.
    func take() -> UnsafeMutableRawPointer? { blocks.popLast() }

    /// Keeps `block` (of `blockBytes`) for a later `take`; false when full (the caller frees it).
    func give(_ block: UnsafeMutableRawPointer) -> Bool {
        guard blocks.count < limit else { return false }
        blocks.append(block)
        return true
    }
}
