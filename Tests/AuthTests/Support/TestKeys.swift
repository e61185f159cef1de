import Crypto
import Foundation
import PortcullisCore
import Synchronization

@testable import Auth

/// Test-only key material, generated at test time with the `openssl` CLI (nothing private is committed).
struct TestKeys: Sendable {
    let rsaPrivate: String
    let rsaPublic: String
    let rsaCertificate: String
    let rsa2Private: String
    let rsa2Public: String
    let ecPrivate: String
    let ecPublic: String
    let ec384Private: String
    let ec384Public: String

    static let shared: TestKeys = {
        do { return try generate() } catch { fatalError("cannot generate test keys with openssl: \(error)") }
    }()

    static func generate() throws -> TestKeys {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pc-auth-keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        func run(_ args: [String]) throws {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            p.arguments = args
            p.currentDirectoryURL = dir
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            p.waitUntilExit()
            guard p.terminationStatus == 0 else { throw CocoaError(.executableLoad) }
        }
        func read(_ name: String) throws -> String {
            try String(contentsOf: dir.appendingPathComponent(name), encoding: .utf8)
        }
        for name in ["rsa", "rsa2"] {
            try run(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "\(name).pem"])
        }
        try run([
            "req", "-new", "-x509", "-key", "rsa.pem", "-subj", "/CN=portcullis-test", "-days", "2", "-out", "rsa.crt",
        ])
        try run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "ec.pem"])
        try run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384", "-out", "ec384.pem"])
        let rsa = try read("rsa.pem"), rsa2 = try read("rsa2.pem"), ec = try read("ec.pem"),
            ec384 = try read("ec384.pem")
        return TestKeys(
            rsaPrivate: rsa, rsaPublic: try PrivateKey(pem: rsa).publicKeyPEM(), rsaCertificate: try read("rsa.crt"),
            rsa2Private: rsa2, rsa2Public: try PrivateKey(pem: rsa2).publicKeyPEM(),
            ecPrivate: ec, ecPublic: try PrivateKey(pem: ec).publicKeyPEM(),
            ec384Private: ec384, ec384Public: try PrivateKey(pem: ec384).publicKeyPEM())
    }

    /// A JWK for a public key PEM (RSA n/e or EC x/y), extracted from the SPKI DER.
    static func jwk(publicPEM: String, kid: String, alg: String? = nil) -> JSONValue {
        let der = Base64.decode(publicPEM.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined())!
        var fields: [String: JSONValue] = ["kid": .string(kid), "use": .string("sig")]
        if let alg { fields["alg"] = .string(alg) }
        if der.count < 150 {
            let width = der.count > 100 ? 48 : 32
            let point = Array(der.suffix(2 * width + 1))
            fields["kty"] = "EC"
            fields["crv"] = .string(width == 32 ? "P-256" : "P-384")
            fields["x"] = .string(Base64URL.encode(point[1...width]))
            fields["y"] = .string(Base64URL.encode(point[(width + 1)...]))
        } else {
            // SPKI for RSA 2048: ... 02 82 01 01 00 <256-byte modulus> 02 03 01 00 01
            let exponent = Array(der.suffix(3))
            let modulus = Array(der.suffix(3 + 2 + 256).prefix(256))
            fields["kty"] = "RSA"
            fields["n"] = .string(Base64URL.encode(modulus))
            fields["e"] = .string(Base64URL.encode(exponent))
        }
        return .object(fields)
    }
}

/// Builds tokens by hand (including hostile ones).
enum TokenFactory {
    static func segment(_ json: JSONValue) -> String { Base64URL.encode(Array(json.encoded().utf8)) }

    static func token(
        header: [String: JSONValue], payload: [String: JSONValue],
        sign: (String) throws -> [UInt8]
    ) rethrows -> String {
        let input = segment(.object(header)) + "." + segment(.object(payload))
        return input + "." + Base64URL.encode(try sign(input))
    }

    static func rsa(
        _ pem: String = TestKeys.shared.rsaPrivate, alg: SigningAlgorithm = .rs256, kid: String? = nil,
        payload: [String: JSONValue]
    ) -> String {
        var header: [String: JSONValue] = ["alg": .string(alg.rawValue), "typ": "JWT"]
        if let kid { header["kid"] = .string(kid) }
        return try! token(header: header, payload: payload) {
            try PrivateKey(pem: pem).sign(Array($0.utf8), algorithm: alg)
        }
    }

    static func hmac(
        _ secret: [UInt8], alg: String = "HS256", digest: HMAC.Digest = .sha256, kid: String? = nil,
        payload: [String: JSONValue]
    ) -> String {
        var header: [String: JSONValue] = ["alg": .string(alg), "typ": "JWT"]
        if let kid { header["kid"] = .string(kid) }
        return token(header: header, payload: payload) { HMAC.compute(digest, key: secret, data: Array($0.utf8)) }
    }

    /// Standard valid claims for `now`.
    static func claims(
        now: Int64 = Timestamp.now().secondsSinceEpoch, sub: String = "user-1",
        issuer: String = "https://issuer.test", audience: String = "portcullis-test",
        extra: [String: JSONValue] = [:]
    ) -> [String: JSONValue] {
        var c: [String: JSONValue] = [
            "sub": .string(sub), "iss": .string(issuer), "aud": .string(audience), "iat": .int(now - 10),
            "exp": .int(now + 3600),
        ]
        for (k, v) in extra { c[k] = v }
        return c
    }
}

/// Captures every log record (to prove tokens never reach logs).
final class CapturingLogSink: LogSink {
    private let records = Mutex<[LogRecord]>([])
    func write(_ record: LogRecord) { records.withLock { $0.append(record) } }
    var lines: [String] {
        records.withLock { $0 }.map { String(decoding: StreamLogSink.render($0, format: .json), as: UTF8.self) }
    }
}

let testConfiguration = AuthConfiguration(issuer: "https://issuer.test", audience: "portcullis-test")

// Literal conveniences for building claims in tests.
extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByBooleanLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { $1 }))
    }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}
