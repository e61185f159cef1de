import Testing

@testable import HTTPServer

/// The receive buffer and the loop's spare blocks: storage moves between them, never between two holders at
/// once, and bytes survive every compaction and growth.
@Suite struct ReceiveBufferTests {
    /// Writes `bytes` into `buffer` as a socket read would.
    private func fill(_ buffer: ReceiveBuffer, _ bytes: [UInt8]) {
        let room = buffer.writable(minimum: bytes.count)
        room.copyBytes(from: bytes)
        buffer.didWrite(bytes.count)
    }

    @Test func newBufferHoldsNoStorageUntilItsFirstRead() {
        let spares = ReceiveBlockSpares()
        let buffer = ReceiveBuffer(spares: spares)
        #expect(buffer.capacity == 0)
        fill(buffer, Array("GET / HTTP/1.1\r\n".utf8))
        #expect(buffer.capacity == ReceiveBlockSpares.blockBytes)
        #expect(Array(buffer.readable) == Array("GET / HTTP/1.1\r\n".utf8))
    }

    @Test func releasedBlockIsTheNextBuffersBlock() {
        let spares = ReceiveBlockSpares()
        let first = ReceiveBuffer(spares: spares)
        fill(first, [1, 2, 3])
        first.consume(3)
        let block = first.base
        first.releaseStorage()
        #expect(first.capacity == 0)
        #expect(spares.count == 1)

        let second = ReceiveBuffer(spares: spares)
        fill(second, [4])
        #expect(second.base == block, "the spare is taken before the allocator is asked")
        #expect(spares.count == 0)
        #expect(Array(second.readable) == [4])
    }

    @Test func bufferWithUnreadBytesKeepsItsStorage() {
        let spares = ReceiveBlockSpares()
        let buffer = ReceiveBuffer(spares: spares)
        fill(buffer, [1, 2, 3])
        buffer.consume(1)
        buffer.releaseStorage()
        #expect(buffer.capacity == ReceiveBlockSpares.blockBytes)
        #expect(spares.count == 0)
        #expect(Array(buffer.readable) == [2, 3])
    }

    @Test func fullSparesLeaveTheBlockToTheAllocator() {
        let spares = ReceiveBlockSpares(limit: 2)
        let buffers = (0..<3).map { _ in ReceiveBuffer(spares: spares) }
        for buffer in buffers {
            fill(buffer, [9])
            buffer.consume(1)
        }
        for buffer in buffers { buffer.releaseStorage() }
        #expect(spares.count == 2)
        #expect(buffers.allSatisfy { $0.capacity == 0 })
    }

    /// Storage grown past one block is not a block: it goes back to the allocator, and the block it replaced
    /// goes to the spares.
    @Test func grownStorageIsNotKeptAsABlock() {
        let spares = ReceiveBlockSpares()
        let buffer = ReceiveBuffer(spares: spares)
        let head = (0..<3000).map { UInt8(truncatingIfNeeded: $0) }
        fill(buffer, head)
        fill(buffer, [UInt8](repeating: 7, count: 3000))
        #expect(buffer.capacity > ReceiveBlockSpares.blockBytes)
        #expect(spares.count == 1, "the outgrown block")
        #expect(Array(buffer.readable.prefix(3000)) == head)
        #expect(Array(buffer.readable.suffix(3000)) == [UInt8](repeating: 7, count: 3000))

        buffer.consume(buffer.readableCount)
        buffer.releaseStorage()
        #expect(spares.count == 1)
    }

    /// A read that needs more than a block at once (a body read, a lingering drain) gets storage of its size.
    @Test func largeFirstReadAllocatesItsOwnSize() {
        let spares = ReceiveBlockSpares()
        _ = spares.give(ReceiveBlockSpares.allocateBlock())
        let buffer = ReceiveBuffer(spares: spares)
        _ = buffer.writable(minimum: 16 * 1024)
        #expect(buffer.capacity == 16 * 1024)
        #expect(spares.count == 1, "the spare stays for a head read")
    }

    @Test func bufferWithoutSparesAllocatesAndFrees() {
        let buffer = ReceiveBuffer(spares: nil)
        fill(buffer, [1])
        #expect(buffer.capacity == ReceiveBlockSpares.blockBytes)
        buffer.consume(1)
        buffer.releaseStorage()
        #expect(buffer.capacity == 0)
        fill(buffer, [2])
        #expect(Array(buffer.readable) == [2])
    }

    /// Through a whole connection: a keep-alive connection that goes idle gives its block to the loop, and
    /// takes it back for the next request.
    @Test func idleConnectionGivesItsBlockToTheLoop() {
        let embedded = EmbeddedConnection(
            responder: ClosureResponder { request in
                HTTPResponse(status: 200, body: .bytes(Array(request.target.utf8)))
            })
        #expect(embedded.loop.receiveSpares.count == 0)
        embedded.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(embedded.output().hasSuffix("\r\n\r\n/a"))
        #expect(embedded.connection.input.capacity == 0, "idle: no storage held")
        #expect(embedded.loop.receiveSpares.count == 1)

        embedded.send("GET /b HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(embedded.output().hasSuffix("\r\n\r\n/b"))
        #expect(embedded.loop.receiveSpares.count == 1, "the same block went out and came back")
    }
}
