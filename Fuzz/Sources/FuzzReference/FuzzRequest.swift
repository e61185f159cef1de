import HTTPServer

/// The request the router targets route, from their input: one field per LF-ended line — method,
/// request-target, then header fields `Name: value` (optional whitespace around the value stripped, as the HTTP
/// parser strips it). Nil when there is no method or no target line.
public func fuzzRequest(_ start: UnsafePointer<UInt8>?, _ count: Int) -> HTTPRequest? {
    let lines = UnsafeBufferPointer(start: start, count: count)
        .split(separator: 0x0A, omittingEmptySubsequences: false)
        .map { String(decoding: $0, as: UTF8.self) }
    guard lines.count >= 2, !lines[0].isEmpty else { return nil }
    var headers = HTTPHeaders()
    for line in lines.dropFirst(2) {
        guard let colon = line.utf8.firstIndex(of: UInt8(ascii: ":")) else { continue }
        let value = line.utf8[line.utf8.index(after: colon)...].drop { $0 == 0x20 || $0 == 0x09 }
        let end = value.lastIndex { $0 != 0x20 && $0 != 0x09 }.map { value.index(after: $0) } ?? value.startIndex
        headers.add(String(line[..<colon]), String(decoding: value[..<end], as: UTF8.self))
    }
    return HTTPRequest(method: HTTPMethod(lines[0]), target: lines[1], headers: headers, receivedAt: 0)
}
