/// Streaming MD5 (RFC 1321): only for the `md5Hash` object metadata the protocol reports; never for security.
///
/// A value type: copies hash independently. `update` does no allocation; feed it in any chunking and the result
/// equals the one-shot `hash(_:)`.
public struct MD5: Sendable {
    public static let byteCount = 16
    private var hasher = EVPHasher(kind: .md5)

    public init() {}

    /// Adds bytes to the running digest. No allocation (unless this value was copied since the last update).
    @inline(__always)
    public mutating func update(_ bytes: UnsafeRawBufferPointer) { hasher.update(bytes) }

    public mutating func update(_ bytes: some Sequence<UInt8>) { bytes.withBytes { hasher.update($0) } }

    /// The digest of everything fed so far (the value stays usable).
    public func finalize() -> [UInt8] { hasher.finalize() }

    public static func hash(_ bytes: UnsafeRawBufferPointer) -> [UInt8] { EVPHasher.hash(.md5, bytes) }

    public static func hash(_ bytes: some Sequence<UInt8>) -> [UInt8] { bytes.withBytes { EVPHasher.hash(.md5, $0) } }
}
