/// Identity text — object names, uids, tokens, bucket names, key ids, capability fields — compared, hashed and
/// ordered by its UTF-8 bytes.
///
/// Swift's `String` `==`, `<` and hashing follow Unicode canonical equivalence: `"caf\u{E9}" == "cafe\u{301}"`
/// is true and both hash alike. For identities that is a hole — a user whose uid is the decomposed form would
/// pass `request.auth.uid == uid` for the composed owner's folder, and a capability minted for one object name
/// would open another. Every backend stores names as bytes, and Firebase compares strings as Java does (code
/// units), so on every access path two canonically equivalent strings are two different identities.
///
/// The one way to compare such text in this project: `a.bytesEqual(b)` for equality, `ExactString` where the
/// text is a dictionary or set key or is sorted, `bytesLess(than:)` for an explicit ordering,
/// `bytesHasPrefix`/`bytesHasSuffix` for prefixes (`String.hasPrefix` compares grapheme clusters: a name
/// `"a/\u{301}"` does not start with `"a/"` for it), and `dictionary[exactly: key]` to read a `String`-keyed
/// dictionary whose keys are known to be pairwise inequivalent (JSON objects: the parser refuses equivalent
/// member names). `String ==` on an identity is a bug (`tests/blackbox/lint` keeps it out of the access paths).
public struct ExactString: Hashable, Comparable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    public let string: String

    @inlinable public init(_ string: String) { self.string = string }
    @inlinable public init(stringLiteral value: String) { self.string = value }

    @inlinable public static func == (a: ExactString, b: ExactString) -> Bool { a.string.bytesEqual(b.string) }

    /// UTF-8 byte order (which is also Unicode scalar order).
    @inlinable public static func < (a: ExactString, b: ExactString) -> Bool { a.string.bytesLess(than: b.string) }

    @inlinable public func hash(into hasher: inout Hasher) {
        // The bytes in one call where they are contiguous (every native string); a hasher takes a byte stream,
        // so this feeds it exactly what the byte-by-byte loop would.
        let hashed: Void? = string.utf8.withContiguousStorageIfAvailable { bytes in
            hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
        }
        if hashed == nil {
            for byte in string.utf8 { hasher.combine(byte) }
        }
        hasher.combine(0xFF as UInt8)  // a terminator no UTF-8 text contains: "ab"+"c" ≠ "a"+"bc" in a tuple
    }

    public var description: String { string }
}

extension StringProtocol {
    /// Whether both texts are the same UTF-8 bytes (not merely canonically equivalent, as `==` decides).
    @inlinable
    public func bytesEqual(_ other: some StringProtocol) -> Bool {
        let a = utf8, b = other.utf8
        guard a.count == b.count else { return false }
        // Compared as two buffers where both are contiguous (a tight loop instead of two index walks).
        if let equal = a.withContiguousStorageIfAvailable({ x in
            b.withContiguousStorageIfAvailable { y in x.elementsEqual(y) }
        }), let equal {
            return equal
        }
        return a.elementsEqual(b)
    }

    /// Whether both texts are the same bytes once ASCII letters are folded to lower case: how HTTP field names,
    /// schemes and tokens compare. No allocation, and no Unicode case mapping (`lowercased()` maps U+212A KELVIN
    /// SIGN to `k`, so two names a server treats as different would compare equal).
    @inlinable
    public func bytesEqualIgnoringASCIICase(_ other: some StringProtocol) -> Bool {
        let a = utf8, b = other.utf8
        return a.count == b.count && a.elementsEqual(b) { $0.equalsIgnoringASCIICase($1) }
    }

    /// Whether this text sorts before `other` in UTF-8 byte order (equivalently, Unicode scalar order).
    @inlinable
    public func bytesLess(than other: some StringProtocol) -> Bool {
        utf8.lexicographicallyPrecedes(other.utf8)
    }

    /// Whether the UTF-8 bytes of this text begin with those of `prefix`.
    @inlinable
    public func bytesHasPrefix(_ prefix: some StringProtocol) -> Bool {
        utf8.starts(with: prefix.utf8)
    }

    /// This text after the bytes of `prefix`, or nil when it does not begin with them (`bytesHasPrefix`): the
    /// rest is cut at a byte offset, so a mark right after the prefix stays in it.
    @inlinable
    public func bytesRemovingPrefix(_ prefix: some StringProtocol) -> String? {
        guard bytesHasPrefix(prefix) else { return nil }
        return String(decoding: utf8.dropFirst(prefix.utf8.count), as: UTF8.self)
    }

    /// The pieces between occurrences of the ASCII byte `separator` (the non-empty ones unless told otherwise).
    /// Unlike `split(separator:)` on `Character`s, a separator followed by a combining mark still separates.
    @inlinable
    public func bytesSplit(separator: UInt8, maxSplits: Int = .max, omittingEmptySubsequences: Bool = true)
        -> [String]
    {
        utf8.split(separator: separator, maxSplits: maxSplits, omittingEmptySubsequences: omittingEmptySubsequences)
            .map { String(decoding: $0, as: UTF8.self) }
    }

    /// The text before and after the first occurrence of the ASCII byte `separator` (nil when there is none), or
    /// the last one with `last`: `name=value` cut at its `=`, found by bytes as `bytesSplit` finds them.
    @inlinable
    public func bytesCut(at separator: UInt8, last: Bool = false) -> (before: String, after: String)? {
        withContiguousUTF8 { bytes in
            guard let at = last ? bytes.lastIndex(of: separator) : bytes.firstIndex(of: separator) else { return nil }
            return (
                String(decoding: UnsafeBufferPointer(rebasing: bytes[..<at]), as: UTF8.self),
                String(decoding: UnsafeBufferPointer(rebasing: bytes[(at + 1)...]), as: UTF8.self)
            )
        }
    }

    /// Whether the UTF-8 bytes of this text end with those of `suffix`.
    @inlinable
    public func bytesHasSuffix(_ suffix: some StringProtocol) -> Bool {
        utf8.reversed().starts(with: suffix.utf8.reversed())
    }
}

extension Dictionary where Key == String {
    /// The value stored under exactly the bytes of `key`; nil when the only stored key is merely canonically
    /// equivalent to it. Sound for dictionaries whose keys are pairwise inequivalent (every JSON object and
    /// everything built from one), since a `String`-keyed dictionary cannot hold two equivalent keys.
    ///
    /// Setting a value stores it under exactly `key`'s bytes, replacing an equivalent key with other bytes (the
    /// dictionary cannot hold both; plain `dict[key] = v` would keep the old key's bytes). Setting nil removes
    /// only a key with exactly these bytes.
    @inlinable
    public subscript(exactly key: String) -> Value? {
        get {
            guard let index = index(forKey: key), self[index].key.bytesEqual(key) else { return nil }
            return self[index].value
        }
        set {
            let stored = index(forKey: key)
            let same = stored.map { self[$0].key.bytesEqual(key) } ?? false
            if let newValue {
                if let stored, !same { remove(at: stored) }
                self.updateValue(newValue, forKey: key)
            } else if let stored, same {
                remove(at: stored)
            }
        }
    }
}

extension Optional where Wrapped: StringProtocol {
    /// `bytesEqual` for optionals: both nil, or both present with the same bytes.
    @inlinable
    public func bytesEqual(_ other: (some StringProtocol)?) -> Bool {
        switch (self, other) {
        case (nil, nil): true
        case (let a?, let b?): a.bytesEqual(b)
        default: false
        }
    }
}

extension Sequence where Element: StringProtocol {
    /// Whether some element has exactly the bytes of `text`.
    @inlinable
    public func containsBytes(_ text: some StringProtocol) -> Bool {
        contains { $0.bytesEqual(text) }
    }

    /// Whether both sequences hold the same texts, byte for byte, in the same order.
    @inlinable
    public func bytesEqual(_ other: some Sequence<Element>) -> Bool {
        elementsEqual(other) { $0.bytesEqual($1) }
    }
}

extension Dictionary where Key == String, Value == String {
    /// Whether both maps hold the same keys and values, byte for byte.
    @inlinable
    public func bytesEqual(_ other: [String: String]) -> Bool {
        count == other.count && allSatisfy { other[exactly: $0.key].bytesEqual($0.value) }
    }
}

extension UInt8 {
    /// Whether two bytes are equal once ASCII letters are folded to lower case. Only letters fold: `x | 0x20` on
    /// both sides alone would also pair `@` with `` ` ``, `-` with CR and `/` with 0x0F.
    @inlinable
    public func equalsIgnoringASCIICase(_ other: UInt8) -> Bool {
        self == other
            || (self | 0x20 == other | 0x20 && (self | 0x20) >= UInt8(ascii: "a") && (self | 0x20) <= UInt8(ascii: "z"))
    }
}
