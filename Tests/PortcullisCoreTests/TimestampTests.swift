import Testing
@testable import PortcullisCore

@Suite struct TimestampTests {
    @Test func formatsMilliseconds() {
        let t = Timestamp(millisecondsSinceEpoch: 1_717_171_717_171)
        #expect(t.rfc3339Milliseconds == "2024-05-31T16:08:37.171Z")
        #expect(Timestamp(rfc3339: "2024-05-31T16:08:37.171Z") == t)
        #expect(Timestamp(rfc3339: "2024-05-31T18:08:37.171+02:00") == t)
        #expect(Timestamp(millisecondsSinceEpoch: 0).httpDate == "Thu, 01 Jan 1970 00:00:00 GMT")
    }
}
