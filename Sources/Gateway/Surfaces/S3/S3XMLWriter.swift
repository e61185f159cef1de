import PortcullisCore

/// Builds S3's XML answers: a document in the S3 namespace, elements appended in order, text escaped.
struct S3XMLWriter {
    private(set) var text = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"

    init(root: String) { text += "<\(root) xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">" }

    mutating func open(_ name: String) { text += "<\(name)>" }
    mutating func close(_ name: String) { text += "</\(name)>" }

    mutating func element(_ name: String, _ value: String) {
        text += "<\(name)>" + MarkupEscaping.escaped(value) + "</\(name)>"
    }

    mutating func element(_ name: String, _ value: Int64) { text += "<\(name)>\(value)</\(name)>" }
    mutating func element(_ name: String, _ value: Bool) { text += "<\(name)>\(value)</\(name)>" }

    /// The finished document, closing `root`.
    func finished(root: String) -> [UInt8] { Array((text + "</\(root)>").utf8) }
}

extension Timestamp {
    /// `2006-02-03T16:45:09.000Z`, as S3 writes times in XML.
    var s3XMLTime: String {
        let seconds = secondsSinceEpoch
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let (year, month, day) = Timestamp.civilFromDays(days)
        let inDay = seconds - days * 86_400
        let millis = (nanosecondsSinceEpoch / 1_000_000) % 1000
        func pad(_ n: Int64, _ width: Int) -> String {
            let digits = String(n)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(inDay / 3600, 2)):\(pad(inDay / 60 % 60, 2)):"
            + "\(pad(inDay % 60, 2)).\(pad(millis, 3))Z"
    }
}
