import Foundation
import PortcullisCore
import Testing

@testable import Upstream

/// Which transfers read in bulk pieces, and that the budget bounding them is taken and given back: first as a
/// pure choice, then through real transfers from a local server, bulk and normal ones on the same reused easy
/// handles (curl refuses a new `CURLOPT_BUFFERSIZE` on a handle still holding a buffer, which fails the request).
@Suite struct ReceiveSizingTests {
    static let configuration = UpstreamConfiguration()
    /// A bulk transfer's extra memory with the defaults: 96 KiB more of curl buffer, 96 KiB more window floor.
    static let extra = 192 * 1024

    @Test func smallUnknownAndUnhintedBodiesAreSizedNormally() {
        let budget = WindowBudget(bytes: 4 << 20)
        let normal = ReceiveSizing.normal(Self.configuration)
        #expect(
            normal == ReceiveSizing(receiveBufferBytes: 32 * 1024, responseBufferBytes: 256 * 1024, reservedBytes: 0))
        for expected: Int64? in [nil, 0, 4096, (1 << 20) - 1] {
            let sizing = ReceiveSizing.choose(
                expectedBodyBytes: expected, configuration: Self.configuration, budget: budget)
            #expect(sizing == normal, "expected \(String(describing: expected))")
        }
        #expect(budget.availableBytes == 4 << 20)
    }

    @Test func aLargeDownloadReadsInBulkWhileTheBudgetLasts() {
        let budget = WindowBudget(bytes: 2 * Self.extra + 1000)
        let bulk = ReceiveSizing(
            receiveBufferBytes: 128 * 1024, responseBufferBytes: 1 << 20, reservedBytes: Self.extra)
        for expected: Int64 in [1 << 20, 1 << 30] {
            #expect(
                ReceiveSizing.choose(expectedBodyBytes: expected, configuration: Self.configuration, budget: budget)
                    == bulk)
        }
        #expect(budget.availableBytes == 1000)
        #expect(
            ReceiveSizing.choose(expectedBodyBytes: 1 << 30, configuration: Self.configuration, budget: budget)
                == .normal(Self.configuration), "budget spent")
        budget.release(Self.extra)
        #expect(
            ReceiveSizing.choose(expectedBodyBytes: 1 << 30, configuration: Self.configuration, budget: budget) == bulk)
    }

    @Test func bulkSizesNoLargerThanNormalOnesTakeNothing() {
        var configuration = Self.configuration
        configuration.bulkReceiveBufferBytes = 16 * 1024
        configuration.bulkResponseBufferBytes = 64 * 1024
        let budget = WindowBudget(bytes: 4 << 20)
        let sizing = ReceiveSizing.choose(expectedBodyBytes: 1 << 30, configuration: configuration, budget: budget)
        #expect(sizing == .normal(configuration))
        #expect(budget.availableBytes == 4 << 20)
    }

    @Test func aHintedDownloadGetsCurlsLargerReadsAndGivesTheBudgetBack() async throws {
        let server = try await TestServer.start()
        let client = UpstreamClient()
        let size = 8 << 20
        #expect(client.bulkBudgetAvailable == 4 << 20)
        let capacity = try await Self.download(
            UpstreamRequest(url: "\(server.base)/bytes?n=\(size)", expectedBodyBytes: Int64(size)), size: size,
            from: client
        ) {
            #expect(client.bulkBudgetAvailable == (4 << 20) - Self.extra, "held while the body is read")
        }
        #expect(capacity == 1 << 20, "a bulk transfer's buffer")
        try await waitUntil { client.activeTransfers == 0 && client.bulkBudgetAvailable == 4 << 20 }
    }

    @Test func pastTheBudgetADownloadIsSizedNormally() async throws {
        let server = try await TestServer.start()
        var configuration = UpstreamConfiguration()
        configuration.bulkBudgetBytes = Self.extra
        let client = UpstreamClient(configuration: configuration)
        let size = 4 << 20
        let hinted = UpstreamRequest(url: "\(server.base)/bytes?n=\(size)", expectedBodyBytes: Int64(size))
        let first = try await Self.download(hinted, size: size, from: client) {
            #expect(client.bulkBudgetAvailable == 0)
            let second = try await Self.download(hinted, size: size, from: client) {}
            #expect(second == 256 * 1024, "no budget left: sized normally")
        }
        #expect(first == 1 << 20)
        let plain = try await Self.download(
            UpstreamRequest(url: "\(server.base)/bytes?n=\(size)"), size: size, from: client
        ) {}
        #expect(plain == 256 * 1024, "no hint: sized normally (on an easy handle a bulk transfer used)")
        try await waitUntil { client.bulkBudgetAvailable == Self.extra }
    }

    /// Reads a whole `/bytes` body, checking every byte; `during` runs once the head is in. Returns the body's
    /// buffer capacity.
    static func download(
        _ request: UpstreamRequest, size: Int, from client: UpstreamClient, during: () async throws -> Void
    ) async throws -> Int {
        let response = try await client.send(request)
        let body = try #require(response.body as? UpstreamBody)
        try await during()
        var received = 0
        while let chunk = try await body.next(maxLength: 64 * 1024) {
            #expect(chunk == expectedPattern(chunk.count, offset: received))
            received += chunk.count
        }
        #expect(received == size)
        return body.bufferCapacity
    }
}
