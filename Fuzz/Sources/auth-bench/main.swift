// In-process JWT verification cost. Release build only:
//   cd Fuzz && swift build -c release --product auth-bench --scratch-path .build/bench && .build/bench/release/auth-bench
// Prints µs/op for cold verification (no cache) per algorithm/engine and for the cached path through
// Authenticator.authenticate (header parsing + SHA-256 + LRU hit).
import Auth
import Crypto
import Foundation
import PortcullisCore

@main
struct AuthBench {
    /// Upload hot-path digests over a 1 MiB buffer, in GB/s of CPU time.
    static func hashThroughput() {
        let buffer = SecureRandom.bytes(1 << 20)
        func rate(_ label: String, _ body: (UnsafeRawBufferPointer) -> Void) {
            buffer.withUnsafeBytes { raw in
                for _ in 0..<5 { body(raw) }
                let start = cpuNanoseconds()
                for _ in 0..<200 { body(raw) }
                let seconds = Double(cpuNanoseconds() - start) / 1e9
                print(
                    label.padding(toLength: 44, withPad: " ", startingAt: 0)
                        + String(format: " %6.2f GB/s (cpu)", 200.0 * Double(buffer.count) / seconds / 1e9))
            }
        }
        var crc = CRC32C(), sha = SHA256(), md5 = MD5()
        rate("CRC32C (hardware path when available)") { crc.update($0) }
        rate("CRC32C slicing-by-8 (software)") { _ = CRC32C.softwareHash($0) }
        rate("SHA-256 streaming") { sha.update($0) }
        rate("MD5 streaming") { md5.update($0) }
        _ = (crc.finalize(), sha.finalize(), md5.finalize())
    }

    /// CPU time of this thread: on a shared 2-core machine wall time also counts time spent descheduled.
    static func cpuNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    static func report(_ label: String, wall: Double, cpu: Double, iterations: Int) {
        let padded = label.padding(toLength: 44, withPad: " ", startingAt: 0)
        print(
            "\(padded) wall \(String(format: "%8.2f", wall)) µs/op  cpu \(String(format: "%8.2f", cpu)) µs/op  (best of 3 × \(iterations))"
        )
    }

    static func measure(_ label: String, iterations: Int, _ body: () throws -> Void) rethrows {
        for _ in 0..<min(200, iterations / 10 + 1) { try body() }  // warm-up
        var bestWall = Double.infinity, bestCPU = Double.infinity
        for _ in 0..<3 {
            let start = MonotonicClock.nanoseconds(), startCPU = cpuNanoseconds()
            for _ in 0..<iterations { try body() }
            bestWall = min(bestWall, Double(MonotonicClock.nanoseconds() - start) / Double(iterations) / 1000)
            bestCPU = min(bestCPU, Double(cpuNanoseconds() - startCPU) / Double(iterations) / 1000)
        }
        report(label, wall: bestWall, cpu: bestCPU, iterations: iterations)
    }

    static func main() async throws {
        if CommandLine.arguments.contains("hash") { return hashThroughput() }
        let rsa = try PrivateKey.generateRSA(bits: 2048)
        let ec = try PrivateKey.generateEC(curve: .p256)
        let secret = Array("bench-hmac-secret-0123456789abcdef".utf8)
        let keys = KeySet(keys: [
            VerificationKey(keyID: "rsa", publicKey: try PublicKey(pem: rsa.publicKeyPEM())),
            VerificationKey(keyID: "ec", publicKey: try PublicKey(pem: ec.publicKeyPEM())),
        ])
        var configuration = AuthConfiguration(
            issuer: "https://securetoken.google.com/bench", audience: "bench",
            requireAuthTime: true, hmacSecret: secret)
        let now = Timestamp.now()
        // A Firebase-sized token (~900 bytes).
        let claims: [String: JSONValue] = [
            "name": .string("Bench User"),
            "picture": .string("https://example.test/" + String(repeating: "p", count: 80)),
            "user_id": .string("bench-user-0001"), "auth_time": .int(now.secondsSinceEpoch - 100),
            "email": .string("bench@example.test"), "email_verified": .bool(true),
            "firebase": .object([
                "identities": .object(["email": .array([.string("bench@example.test")])]),
                "sign_in_provider": .string("password"),
            ]),
        ]
        func mint(_ alg: String, _ pem: String?, _ kid: String?) throws -> String {
            try DevToken.mint(
                signingKeyPEM: pem, hmacSecret: secret, algorithm: alg, keyID: kid, uid: "bench-user-0001",
                claims: claims, ttlSeconds: 3600, issuer: configuration.issuer, audience: configuration.audience,
                now: now)
        }
        let rs256 = try mint("RS256", rsa.privateKeyPEM(), "rsa")
        let es256 = try mint("ES256", ec.privateKeyPEM(), "ec")
        let hs256 = try mint("HS256", nil, nil)
        print("token sizes: RS256 \(rs256.utf8.count) B, ES256 \(es256.utf8.count) B, HS256 \(hs256.utf8.count) B")

        let onlyCached = CommandLine.arguments.contains("cached") || CommandLine.arguments.contains("json")
        let onlyRS256 = CommandLine.arguments.contains("rs256")
        for engine in SignatureEngine.allCases where !onlyCached && !(onlyRS256 && engine == .libJWT) {
            configuration.signatureEngine = engine
            let verifier = TokenVerifier(configuration: configuration)
            let n = engine == .libJWT ? 300 : 3000
            for (name, token) in [("RS256", rs256), ("ES256", es256), ("HS256", hs256)]
            where !onlyRS256 || name == "RS256" {
                let bytes = Array(token.utf8)
                try measure(
                    "cold \(name) verify [\(engine.rawValue)]",
                    iterations: name == "HS256" ? 20_000 : (onlyRS256 ? 10 * n : n)
                ) {
                    _ = try verifier.verify(bytes, keys: keys, now: now)
                }
            }
        }

        configuration.signatureEngine = .openSSL
        let auth = Authenticator(
            configuration: configuration, keySource: .fixed(keys), metrics: MetricsRegistry(),
            logger: .disabled)
        let header = "Bearer \(rs256)"
        _ = try await auth.authenticate(authorization: header)
        let iterations = onlyCached ? 2_000_000 : 200_000
        // Off the main actor, as in the gateway (a main-actor caller would hop executors on every call).
        let (bestWall, bestCPU) = try await Task.detached {
            var bestWall = Double.infinity, bestCPU = Double.infinity
            for _ in 0..<3 {
                let start = MonotonicClock.nanoseconds(), startCPU = cpuNanoseconds()
                for _ in 0..<iterations { _ = try await auth.authenticate(authorization: header) }
                bestWall = min(bestWall, Double(MonotonicClock.nanoseconds() - start) / Double(iterations) / 1000)
                bestCPU = min(bestCPU, Double(cpuNanoseconds() - startCPU) / Double(iterations) / 1000)
            }
            return (bestWall, bestCPU)
        }.value
        report("cached RS256 authenticate (header→principal)", wall: bestWall, cpu: bestCPU, iterations: iterations)
        let bytes = Array(rs256.utf8)
        measure("SHA-256 of the token (cache key)", iterations: 200_000) { _ = SHA256.hash(bytes) }
        let segments = rs256.split(separator: ".")
        let payload = Base64URL.decode(segments[1])!, signature = Base64URL.decode(segments[2])!
        let signingInput = Array(rs256.utf8.prefix(segments[0].utf8.count + 1 + segments[1].utf8.count))
        measure("base64url decode of payload + signature", iterations: 200_000) {
            _ = Base64URL.decode(segments[1]); _ = Base64URL.decode(segments[2])
        }
        measure("JSON parse of the payload", iterations: CommandLine.arguments.contains("json") ? 1_000_000 : 100_000) {
            _ = try? JSONValue.parse(payload)
        }
        let publicKey = try PublicKey(pem: rsa.publicKeyPEM())
        measure("RSA-2048 PKCS#1 verify (PublicKey.verify)", iterations: 10_000) {
            _ = publicKey.verify(signature: signature, data: signingInput, algorithm: .rs256)
        }
    }
}
