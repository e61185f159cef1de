internal import COpenSSL

/// Cryptographically secure random bytes from OpenSSL's DRBG (seeded from the kernel).
public enum SecureRandom {
    /// `count` random bytes. A DRBG failure is unrecoverable: the process stops rather than hand out weak bytes.
    public static func bytes(_ count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            if count > 0 {
                guard RAND_bytes(buffer.baseAddress, Int32(count)) == 1 else {
                    fatalError("OpenSSL: RAND_bytes failed: \(OpenSSL.takeError() ?? "unknown")")
                }
            }
            initialized = count
        }
    }

    /// A random (version 4) UUID in lower-case canonical form, e.g. `0b9a8f64-3c1e-4b7a-9d2f-5e6a7b8c9d0e`.
    public static func uuidString() -> String {
        var b = bytes(16)
        b[6] = (b[6] & 0x0F) | 0x40
        b[8] = (b[8] & 0x3F) | 0x80
        let hex = Array("0123456789abcdef".utf8)
        return String(unsafeUninitializedCapacity: 36) { out in
            var o = 0
            for (i, byte) in b.enumerated() {
                if i == 4 || i == 6 || i == 8 || i == 10 { out[o] = 45; o += 1 }
                out[o] = hex[Int(byte >> 4)]
                out[o + 1] = hex[Int(byte & 15)]
                o += 2
            }
            return o
        }
    }
}
