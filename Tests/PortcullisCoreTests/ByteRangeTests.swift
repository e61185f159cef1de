import Testing

@testable import PortcullisCore

@Suite struct ByteRangeTests {
    @Test func parsesSingleRanges() {
        #expect(ByteRangeSpec.parse("bytes=0-99") == .fromTo(first: 0, last: 99))
        #expect(ByteRangeSpec.parse("bytes=100-") == .fromTo(first: 100, last: nil))
        #expect(ByteRangeSpec.parse("bytes=-500") == .suffix(count: 500))
    }

    @Test(arguments: [
        "bytes=5-1", "bytes=0-1,3-4", "items=0-1", "bytes=a-b", "bytes=-", "bytes=", "0-1",
        "bytes=99999999999999999999-",
    ])
    func ignoresWhatItCannotServe(_ header: String) {
        #expect(ByteRangeSpec.parse(header) == nil)
    }

    @Test func resolvesAgainstSize() {
        #expect(ByteRangeSpec.fromTo(first: 0, last: 99).resolve(size: 50) == ResolvedRange(offset: 0, length: 50))
        #expect(ByteRangeSpec.fromTo(first: 50, last: nil).resolve(size: 50) == nil)
        #expect(ByteRangeSpec.suffix(count: 10).resolve(size: 4) == ResolvedRange(offset: 0, length: 4))
        #expect(ByteRangeSpec.suffix(count: 0).resolve(size: 4) == nil)
        #expect(ByteRangeSpec.fromTo(first: 0, last: 0).resolve(size: 0) == nil)
        #expect(ResolvedRange(offset: 10, length: 5).last == 14)
    }
}
