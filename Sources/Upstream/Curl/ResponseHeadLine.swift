/// One line of a response head as curl hands it to the header callback (with its CR LF), read on bytes: the
/// callback runs for every line of every upstream response on the loop thread, so a line becomes Strings only
/// for a field's name and value.
enum ResponseHeadLine: Equatable {
    /// `HTTP/x y …`: a status line; a new one (after a 1xx) starts the head over. 0 when the code is unreadable.
    case status(Int)
    /// The empty line that ends the head.
    case end
    case field(name: String, value: String)
    /// Neither (a line without a colon): ignored.
    case other

    init(_ line: UnsafeRawBufferPointer) {
        var count = line.count
        while count > 0, line[count - 1] == 0x0D || line[count - 1] == 0x0A { count -= 1 }
        guard count > 0 else {
            self = .end
            return
        }
        if count >= 5, line[0] == 0x48, line[1] == 0x54, line[2] == 0x54, line[3] == 0x50, line[4] == 0x2F {  // HTTP/
            var index = 5
            while index < count, line[index] != 0x20 { index += 1 }
            while index < count, line[index] == 0x20 { index += 1 }
            var code = 0
            var digits = 0
            while index < count, digits < 4, (0x30...0x39).contains(line[index]) {
                code = code * 10 + Int(line[index] - 0x30)
                digits += 1
                index += 1
            }
            let ended = index == count || line[index] == 0x20
            self = .status(digits == 3 && ended ? code : 0)
            return
        }
        guard let colon = line[..<count].firstIndex(of: 0x3A) else {
            self = .other
            return
        }
        var start = colon + 1
        var end = count
        while start < end, line[start] == 0x20 || line[start] == 0x09 { start += 1 }
        while end > start, line[end - 1] == 0x20 || line[end - 1] == 0x09 { end -= 1 }
        self = .field(
            name: String(decoding: UnsafeRawBufferPointer(rebasing: line[..<colon]), as: UTF8.self),
            value: String(decoding: UnsafeRawBufferPointer(rebasing: line[start..<end]), as: UTF8.self))
    }
}
