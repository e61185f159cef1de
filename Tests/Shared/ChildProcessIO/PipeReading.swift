public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Reading a child process's pipe in tests without Foundation's `readDataToEndOfFile()`/`availableData`, which
/// end the test process with a `try!` when `read(2)` is interrupted by a signal (the SIGCHLD of another test's
/// child arrives on whichever thread is blocked in `read`).
extension FileHandle {
    /// Everything until end of file, retrying reads a signal interrupted.
    public func readToEndRetryingInterrupts() -> Data {
        var data = Data()
        while let chunk = readChunkRetryingInterrupts(), !chunk.isEmpty { data.append(chunk) }
        return data
    }

    /// What one `read(2)` returns (up to 64 KiB; empty at end of file), retrying a read a signal interrupted;
    /// nil on any other error.
    public func readChunkRetryingInterrupts(maxLength: Int = 65536) -> Data? {
        var buffer = [UInt8](repeating: 0, count: maxLength)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fileDescriptor, $0.baseAddress, maxLength) }
            if n >= 0 { return Data(buffer[0..<n]) }
            if errno != EINTR { return nil }
        }
    }
}
