internal import PortcullisCore

extension String {
    /// `bytesEqual` for two `String`s, on their contiguous UTF-8 (native and small strings are): a length check
    /// and a word-at-a-time comparison instead of walking `String.Index`es.
    @inline(__always)
    func sameBytes(_ other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        let fast = utf8.withContiguousStorageIfAvailable { a in
            other.utf8.withContiguousStorageIfAvailable { b in
                equalBytes(UnsafeRawBufferPointer(a), UnsafeRawBufferPointer(b))
            }
        }
        return (fast ?? nil) ?? bytesEqual(other)
    }
}

/// Whether two equally long byte ranges hold the same bytes, compared eight at a time.
@inline(__always)
func equalBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
    let count = a.count
    var i = 0
    while i + 8 <= count {
        if a.loadUnaligned(fromByteOffset: i, as: UInt64.self) != b.loadUnaligned(fromByteOffset: i, as: UInt64.self) {
            return false
        }
        i += 8
    }
    while i < count {
        if a[i] != b[i] { return false }
        i += 1
    }
    return true
}
