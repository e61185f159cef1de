import PortcullisCore
import Testing

/// RFC 3339 times outside what nanoseconds since 1970 in an Int64 can hold (1677-09-21 to 2262-04-11) are not
/// timestamps: parsing them answers nil rather than trapping on overflow. Callers parse times from requests
/// (`If-Modified-Since`, rules playground and test cases), so a trap there was a one-header crash.
@Suite struct TimestampRangeTests {
    @Test(arguments: [
        "9999-12-31T23:59:59Z", "2262-04-12T00:00:00Z", "1677-09-20T00:00:00Z", "0001-01-01T00:00:00Z",
        "2262-04-11T23:47:16.854775808Z", "2262-04-11T23:47:17+00:00",
    ])
    func outOfRangeTimesAreNotTimestamps(_ text: String) {
        #expect(Timestamp(rfc3339: text) == nil, "\(text)")
    }

    @Test func theEdgesOfTheRangeParse() {
        #expect(Timestamp(rfc3339: "2262-04-11T23:47:16.854775807Z")?.nanosecondsSinceEpoch == Int64.max)
        #expect(Timestamp(rfc3339: "1677-09-21T00:12:44Z") != nil)
        #expect(Timestamp(rfc3339: "9999-12-31T23:59:59+23:59") == nil)
    }
}
