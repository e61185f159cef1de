import Foundation
import PortcullisCore
import Testing

/// `portcullis token` without `--key`/`--hmac-secret`: it signs with the key `make run` keeps in
/// `./data/dev-keys/` and takes that gateway's issuer and audience from there, so the README's
/// `portcullis token --uid ops` works against `make run` as printed.
@Suite struct CLITokenDevKeysTests {
    /// A directory laid out as scripts/run.sh leaves it: `data/dev-keys/jwt-private.pem`, `jwt-issuer`,
    /// `jwt-audience`.
    private func devDirectory() async throws -> URL {
        try await withCheckedThrowingContinuation { continuation in
            // openssl and the CLI block: keep them off the cooperative pool.
            DispatchQueue.global().async { continuation.resume(with: Result { try makeDevDirectory() }) }
        }
    }

    private func makeDevDirectory() throws -> URL {
        let root = try CLI.temporaryDirectory()
        let keys = root.appendingPathComponent("data/dev-keys")
        try FileManager.default.createDirectory(at: keys, withIntermediateDirectories: true)
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        openssl.arguments = [
            "openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048",
            "-out", keys.appendingPathComponent("jwt-private.pem").path,
        ]
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        try "https://portcullis.local/dev\n".write(
            to: keys.appendingPathComponent("jwt-issuer"), atomically: true,
            encoding: .utf8)
        try "portcullis-dev\n".write(to: keys.appendingPathComponent("jwt-audience"), atomically: true, encoding: .utf8)
        return root
    }

    /// `portcullis ARGS` in `directory`, off the cooperative pool.
    private func run(_ arguments: [String], in directory: URL) async throws -> CLI.Outcome {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try CLI.run(arguments, in: directory) })
            }
        }
    }

    /// The claims of a compact JWT (unverified: the gateway's verification is tested elsewhere).
    private func claims(_ token: String) throws -> JSONValue {
        let parts = token.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".")
        try #require(parts.count == 3)
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        let data = try #require(Data(base64Encoded: base64))
        return try JSONValue.parse(Array(data))
    }

    @Test func signsWithTheDevKeyAndItsIssuerAndAudience() async throws {
        let root = try await devDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let minted = try await run(["token", "--uid", "ops"], in: root)
        #expect(minted.status == 0, "\(minted.stderr)")
        let payload = try claims(minted.stdout)
        #expect(payload["sub"]?.stringValue == "ops")
        #expect(payload["iss"]?.stringValue == "https://portcullis.local/dev")
        #expect(payload["aud"]?.stringValue == "portcullis-dev")
        // Flags still win over the directory's defaults.
        let custom = try await run(["token", "--issuer", "other", "--audience", "aud2"], in: root)
        #expect(try claims(custom.stdout)["iss"]?.stringValue == "other")
        #expect(try claims(custom.stdout)["aud"]?.stringValue == "aud2")
    }

    @Test func withoutTheDirectoryItAsksForAKey() async throws {
        let root = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let outcome = try await run(["token", "--uid", "ops"], in: root)
        #expect(outcome.status == 2)
        #expect(outcome.stderr.contains("--key FILE"))
        #expect(outcome.stderr.contains("data/dev-keys"))
    }
}
