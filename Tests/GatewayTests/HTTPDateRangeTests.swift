import Testing

@testable import Gateway

/// An HTTP date beyond what a `Timestamp` holds is unparsable, so a conditional header carrying one is ignored
/// as RFC 9110 says, instead of crashing the request's thread (it used to trap: year 9999).
@Suite struct HTTPDateRangeTests {
    @Test func aFarFutureDateIsIgnored() {
        #expect(HTTPDate.parse("Fri, 31 Dec 9999 23:59:59 GMT") == nil)
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") != nil)
    }
}
