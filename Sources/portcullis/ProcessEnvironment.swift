import PortcullisCore

#if canImport(Glibc)
import Glibc
#endif

/// The process environment as a dictionary (read once, here only: libraries never call `getenv`).
enum ProcessEnvironment {
    static func current() -> [String: String] {
        var result: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let (name, value) = text.bytesCut(at: UInt8(ascii: "=")) { result[exactly: name] = value }
            pointer += 1
        }
        return result
    }
}
