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

    /// The bytes form and the text forms (`String`, `Substring`) parse alike, refusals included.
    @Test(arguments: [
        "2026-12-04T10:00:00.123Z", "2026-12-04T10:00:01Z", "2026-12-04t10:00:01z", "2026-12-04T10:00:00.123456789Z",
        "2026-12-04T10:00:00+05:30", "1969-12-31T23:59:59.5-00:00", "2026-12-04T10:00:00", "2026-13-04T10:00:00Z",
        "2026-12-04T10:00:00.Z", "9999-12-31T23:59:59Z", "", "2026-12-04 10:00:00Z",
    ])
    func rfc3339FromBytesAgreesWithText(_ text: String) {
        let fromText = Timestamp(rfc3339: text)
        #expect(Timestamp(rfc3339UTF8: Array(text.utf8)[...]) == fromText, "\(text)")
        #expect(Timestamp(rfc3339: ("<" + text + ">").dropFirst().dropLast()) == fromText, "\(text)")
    }
}
