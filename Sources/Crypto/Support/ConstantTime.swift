internal import COpenSSL

/// Comparisons whose running time does not depend on where the inputs differ.
public enum ConstantTime {
    /// True when both byte strings are equal. The time depends only on the lengths (and unequal lengths return
    /// false at once); to hide the length of a secret too, compare digests (see `equalDigests`).
    public static func equals(_ a: some Sequence<UInt8>, _ b: some Sequence<UInt8>) -> Bool {
        a.withBytes { x in
            b.withBytes { y in
                guard x.count == y.count else { return false }
                guard x.count > 0 else { return true }
                return CRYPTO_memcmp(x.baseAddress, y.baseAddress, x.count) == 0
            }
        }
    }

    /// Compares SHA-256 digests of both inputs in constant time: leaks neither content nor length of the secret.
    public static func equalDigests(_ a: some Sequence<UInt8>, _ b: some Sequence<UInt8>) -> Bool {
        equals(SHA256.hash(a), SHA256.hash(b))
    }
}
