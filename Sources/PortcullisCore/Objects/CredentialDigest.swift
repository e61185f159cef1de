/// A 256-bit collision-resistant digest (SHA-256) of a credential, as four words: cheap to hash, compare and
/// copy, no heap storage.
///
/// Contract: two credentials with the same digest are the same bytes, so anything derived from them (a
/// principal's uid and claims) is the same too. Caches key on it for that reason — the verification cache
/// (token → principal) and the rules' decision memo (principal → decision).
public struct CredentialDigest: Hashable, Sendable {
    public let a: UInt64, b: UInt64, c: UInt64, d: UInt64

    public init(a: UInt64, b: UInt64, c: UInt64, d: UInt64) {
        (self.a, self.b, self.c, self.d) = (a, b, c, d)
    }

    /// The digest's 32 bytes, in order. Precondition: `bytes.count == 32`.
    public init(bytes: UnsafeRawBufferPointer) {
        precondition(bytes.count == 32, "a credential digest is 32 bytes")
        a = bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)
        b = bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
        c = bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self)
        d = bytes.loadUnaligned(fromByteOffset: 24, as: UInt64.self)
    }

    /// Equality whose running time does not depend on where the digests differ (for secrets such as the admin
    /// key's digest).
    public func constantTimeEquals(_ other: CredentialDigest) -> Bool {
        ((a ^ other.a) | (b ^ other.b) | (c ^ other.c) | (d ^ other.d)) == 0
    }
}
