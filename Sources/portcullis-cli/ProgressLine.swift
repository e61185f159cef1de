import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A one-line progress display, drawn on stderr only when stderr is a terminal, so stdout stays clean for
/// pipes (`cp gs://… -`) and scripts.
final class ProgressLine: @unchecked Sendable {
    private let lock = NSLock()
    let enabled: Bool

    init(enabled: Bool = isatty(2) == 1) { self.enabled = enabled }

    /// `[#####.....] 50% 512/1024 bytes`, redrawn in place.
    func show(_ done: Int64, _ total: Int64, suffix: String = "bytes") {
        guard enabled else { return }
        lock.withLock {
            let percent = total > 0 ? Int(Double(done) / Double(total) * 100) : 0
            let width = 30
            let filled = total > 0 ? min(width, Int(Double(width) * Double(done) / Double(total))) : 0
            let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: max(0, width - filled))
            let line = "\r[\(bar)] \(percent)% \(done)/\(max(total, 0)) \(suffix)\u{1B}[K"
            FileHandle.standardError.write(Data(line.utf8))
        }
    }

    /// Ends the line (a newline) when one was drawn.
    func finish() { if enabled { FileHandle.standardError.write(Data("\n".utf8)) } }
}
