/// Streaming SHA-256 (FIPS 180-4): content hashes, cache keys, S3 payload signatures.
///
/// A value type: copies hash independently. `update` does no allocation; feed it in any chunking and the result
/// equals the one-shot `hash(_:)`.
public struct SHA256: Sendable {
    public static let byteCount = 32
    private var hasher = EVPHasher(kind: .sha256)

    public init() {}

    /// Adds bytes to the running digest. No allocation (unless this value was copied since the last update).
    @inline(__always)
    public mutating func update(_ bytes: UnsafeRawBufferPointer) { hasher.update(bytes) }

    public mutating func update(_ bytes: some Sequence<UInt8>) { bytes.withBytes { hasher.update($0) } }

    /// The digest of everything fed so far (the value stays usable).
    public func finalize() -> [UInt8] { hasher.finalize() }

    public static func hash(_ bytes: UnsafeRawBufferPointer) -> [UInt8] { EVPHasher.hash(.sha256, bytes) }

    /// The digest written to `out` (at least `byteCount` bytes): no allocation, for hot paths.
    public static func hash(_ bytes: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) {
        EVPHasher.hash(.sha256, bytes, into: out)
    }

    public static func hash(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        bytes.withBytes { EVPHasher.hash(.sha256, $0) }
    }
}
