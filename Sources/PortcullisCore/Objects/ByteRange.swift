/// A single HTTP byte range as the client wrote it, before the object size is known (RFC 9110 §14.1.2).
public enum ByteRangeSpec: Sendable, Equatable {
    /// `bytes=first-` or `bytes=first-last` (last inclusive).
    case fromTo(first: Int64, last: Int64?)
    /// `bytes=-count`: the final `count` bytes.
    case suffix(count: Int64)

    /// Parses a `Range` header value. Returns nil for anything other than one well-formed `bytes` range, so the
    /// caller serves the whole object (multi-range and unknown units are ignored, as RFC 9110 allows).
    public static func parse(_ header: some StringProtocol) -> ByteRangeSpec? {
        let trimmed = header.utf8.drop(while: { $0 == 0x20 })
        guard trimmed.starts(with: "bytes=".utf8) else { return nil }
        let spec = Array(trimmed.dropFirst(6))
        guard let dash = spec.firstIndex(of: UInt8(ascii: "-")), !spec.contains(UInt8(ascii: ",")) else { return nil }
        let first = spec[..<dash], last = spec[(dash + 1)...]
        func number(_ digits: ArraySlice<UInt8>) -> Int64? {
            guard !digits.isEmpty, digits.count <= 18, digits.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
            return digits.reduce(Int64(0)) { $0 * 10 + Int64($1 - 48) }
        }
        if first.isEmpty {
            guard let count = number(last) else { return nil }
            return .suffix(count: count)
        }
        guard let start = number(first) else { return nil }
        if last.isEmpty { return .fromTo(first: start, last: nil) }
        guard let end = number(last), end >= start else { return nil }
        return .fromTo(first: start, last: end)
    }

    /// Resolves against an object of `size` bytes: the concrete range, or nil when unsatisfiable (→ 416).
    public func resolve(size: Int64) -> ResolvedRange? {
        switch self {
        case .fromTo(let first, let last):
            guard first < size else { return nil }
            let end = min(last ?? (size - 1), size - 1)
            return ResolvedRange(offset: first, length: end - first + 1)
        case .suffix(let count):
            guard count > 0, size > 0 else { return nil }
            let length = min(count, size)
            return ResolvedRange(offset: size - length, length: length)
        }
    }
}

/// A satisfiable byte range of a known object: `length` bytes starting at `offset`.
public struct ResolvedRange: Sendable, Equatable {
    public let offset: Int64
    public let length: Int64
    public init(offset: Int64, length: Int64) {
        self.offset = offset
        self.length = length
    }
    /// Inclusive last byte index, as `Content-Range` writes it.
    public var last: Int64 { offset + length - 1 }
}
