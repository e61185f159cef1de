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

    /// The byte-appending formatters agree with the String ones and with known values.
    @Test func appendingFormatters() {
        let t = Timestamp(nanosecondsSinceEpoch: 784_111_777_123_456_789)
        #expect(t.httpDate == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(t.format(fractionDigits: 0) == "1994-11-06T08:49:37Z")
        #expect(t.format(fractionDigits: 6) == "1994-11-06T08:49:37.123456Z")
        #expect(t.format(fractionDigits: 9) == "1994-11-06T08:49:37.123456789Z")
        var out = Array("x".utf8)
        t.append(fractionDigits: 3, to: &out)
        out.append(32)
        t.appendHTTPDate(to: &out)
        #expect(String(decoding: out, as: UTF8.self) == "x1994-11-06T08:49:37.123Z Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(Timestamp(millisecondsSinceEpoch: 4_102_444_799_000).httpDate == "Thu, 31 Dec 2099 23:59:59 GMT")
    }
}
