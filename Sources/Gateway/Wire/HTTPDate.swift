import PortcullisCore

/// Parsing of HTTP dates for `If-Modified-Since` and `If-Range` (RFC 9110 §5.6.7). Only the IMF-fixdate form
/// that every current client sends (`Sun, 06 Nov 1994 08:49:37 GMT`) is accepted; anything else is treated as
/// an invalid date, which the RFC says to ignore.
enum HTTPDate {
    static func parse(_ text: String) -> Timestamp? {
        // The form is ASCII, and on ASCII the `Character` counts below are byte counts.
        guard text.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        let parts = text.bytesSplit(separator: UInt8(ascii: " "))
        guard parts.count == 6, parts[0].hasSuffix(","), parts[5] == "GMT",
            parts[1].count == 2, parts[3].count == 4, parts[4].count == 8
        else { return nil }
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard let month = months.firstIndex(of: String(parts[2])) else { return nil }
        let monthText = month < 9 ? "0\(month + 1)" : "\(month + 1)"
        return Timestamp(rfc3339: "\(parts[3])-\(monthText)-\(parts[1])T\(parts[4])Z")
    }
}
