// S9 of `make bench`: in-process micro-benchmarks, thread CPU time (robust on a shared machine).
//   cd Fuzz && swift build -c release --product portcullis-microbench && .build/release/portcullis-microbench [RULES_FIXTURE_DIR]
// RULES_FIXTURE_DIR defaults to ../Tests/RulesTests/Fixtures/bench (storage.rules + CASES.json).
// Prints human lines and one machine line per figure: `RESULT <name> <µs/op> <target µs>` (bench/bench.py parses them).
//   cold_rs256      Authenticator.authenticate over distinct RS256 tokens (every call a cache miss: header
//                   parse, SHA-256 cache key, signature check, claim checks, cache insert)
//   cached_verify   Authenticator.authenticate of one token already in the cache (header → principal)
//   rules_decision  one Ruleset.evaluate, mean over the request shapes of the benchmark fixture
import Auth
import Crypto
import Foundation
import PortcullisCore
import Rules

/// CPU time of this thread: wall time on a 2-core machine shared by other jobs also counts descheduled time.
func cpuNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

func emit(_ name: String, _ label: String, cpu: Double, wall: Double, target: Double) {
    let padded = label.padding(toLength: 52, withPad: " ", startingAt: 0)
    print(
        "\(padded) cpu \(String(format: "%8.2f", cpu)) µs/op  wall \(String(format: "%8.2f", wall)) µs/op  (target ≤ \(String(format: "%.0f", target)))"
    )
    print("RESULT \(name) \(String(format: "%.3f", cpu)) \(String(format: "%.0f", target))")
}

@main
struct MicroBench {
    static func main() async throws {
        try await auth()
        try rules()
    }

    static func auth() async throws {
        let rsa = try PrivateKey.generateRSA(bits: 2048)
        let keys = KeySet(keys: [VerificationKey(keyID: "rsa", publicKey: try PublicKey(pem: rsa.publicKeyPEM()))])
        let configuration = AuthConfiguration(
            issuer: "https://securetoken.google.com/bench", audience: "bench",
            requireAuthTime: true)
        let now = Timestamp.now()
        let privatePEM = try rsa.privateKeyPEM()
        // Firebase-sized tokens (~900 bytes), each distinct (different uid), so every cold call misses the cache.
        func mint(_ index: Int) throws -> String {
            let uid = "bench-user-\(index)"
            let claims: [String: JSONValue] = [
                "name": .string("Bench User"),
                "picture": .string("https://example.test/" + String(repeating: "p", count: 80)),
                "user_id": .string(uid), "auth_time": .int(now.secondsSinceEpoch - 100),
                "email": .string("bench@example.test"), "email_verified": .bool(true),
                "firebase": .object([
                    "identities": .object(["email": .array([.string("bench@example.test")])]),
                    "sign_in_provider": .string("password"),
                ]),
            ]
            return try DevToken.mint(
                signingKeyPEM: privatePEM, hmacSecret: nil, algorithm: "RS256", keyID: "rsa", uid: uid,
                claims: claims, ttlSeconds: 3600, issuer: configuration.issuer,
                audience: configuration.audience, now: now)
        }
        let distinct = 2000
        let headers = try (0..<distinct).map { "Bearer " + (try mint($0)) }
        print("minted \(distinct) distinct RS256 tokens of ~\(headers[0].utf8.count - 7) bytes")

        let result = try await Task.detached { () async throws -> (Double, Double, Double, Double) in
            // Cold: a fresh authenticator per round (empty cache), each token once.
            var coldCPU = Double.infinity, coldWall = Double.infinity
            for round in 0..<3 {
                let auth = Authenticator(
                    configuration: configuration, keySource: .fixed(keys), metrics: MetricsRegistry(),
                    logger: .disabled)
                let slice = round == 0 ? headers[0..<200] : headers[0..<distinct]  // round 0 warms code paths
                let start = MonotonicClock.nanoseconds(), startCPU = cpuNanoseconds()
                for header in slice {
                    guard try await auth.authenticate(authorization: header) != nil else { fatalError("no principal") }
                }
                if round == 0 { continue }
                coldWall = min(coldWall, Double(MonotonicClock.nanoseconds() - start) / Double(slice.count) / 1000)
                coldCPU = min(coldCPU, Double(cpuNanoseconds() - startCPU) / Double(slice.count) / 1000)
            }
            // Cached: one token, already verified.
            let auth = Authenticator(
                configuration: configuration, keySource: .fixed(keys), metrics: MetricsRegistry(),
                logger: .disabled)
            let header = headers[0]
            _ = try await auth.authenticate(authorization: header)
            let iterations = 200_000
            var hitCPU = Double.infinity, hitWall = Double.infinity
            for _ in 0..<3 {
                let start = MonotonicClock.nanoseconds(), startCPU = cpuNanoseconds()
                for _ in 0..<iterations { _ = try await auth.authenticate(authorization: header) }
                hitWall = min(hitWall, Double(MonotonicClock.nanoseconds() - start) / Double(iterations) / 1000)
                hitCPU = min(hitCPU, Double(cpuNanoseconds() - startCPU) / Double(iterations) / 1000)
            }
            return (coldCPU, coldWall, hitCPU, hitWall)
        }.value
        emit("cold_rs256", "cold RS256 verify (distinct tokens, cache miss)", cpu: result.0, wall: result.1, target: 60)
        emit("cached_verify", "cached verify (header → principal, cache hit)", cpu: result.2, wall: result.3, target: 3)
    }

    static func rules() throws {
        let fixtureDir =
            CommandLine.arguments.dropFirst().first
            ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
                "../../../Tests/RulesTests/Fixtures/bench"
            ).standardized.path
        let fixtures = URL(fileURLWithPath: fixtureDir)
        let source = try String(contentsOf: fixtures.appendingPathComponent("storage.rules"), encoding: .utf8)
        let ruleset = try Ruleset.compile(source, fileName: "storage.rules")
        let cases = try RulesTestFile.parse(Array(try Data(contentsOf: fixtures.appendingPathComponent("CASES.json"))))
        var allowed = 0
        for c in cases where ruleset.evaluate(c.request).allowed { allowed += 1 }  // warm-up
        let iterations = 20_000
        var bestCPU = Double.infinity, bestWall = Double.infinity, worstCase = 0.0
        for _ in 0..<3 {
            let start = MonotonicClock.nanoseconds(), startCPU = cpuNanoseconds()
            var worst = 0.0
            for c in cases {
                let caseStart = cpuNanoseconds()
                for _ in 0..<iterations where ruleset.evaluate(c.request).allowed { allowed &+= 1 }
                worst = max(worst, Double(cpuNanoseconds() - caseStart) / Double(iterations) / 1000)
            }
            let decisions = Double(iterations * cases.count)
            let cpu = Double(cpuNanoseconds() - startCPU) / decisions / 1000
            if cpu < bestCPU { bestCPU = cpu; worstCase = worst }
            bestWall = min(bestWall, Double(MonotonicClock.nanoseconds() - start) / decisions / 1000)
        }
        print(
            "rules fixture: \(fixtures.path) (\(cases.count) request shapes; slowest shape \(String(format: "%.2f", worstCase)) µs)"
        )
        emit("rules_decision", "rules decision (mean over fixture shapes)", cpu: bestCPU, wall: bestWall, target: 5)
        if allowed == -1 { print(allowed) }
    }
}
