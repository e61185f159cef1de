import Crypto
import Foundation
import Testing

/// Keys are generated at test time with the `openssl` CLI; nothing private is committed.
@Suite struct KeyTests {
    /// Key files in a directory of their own, removed with the last reference.
    final class Material {
        let dir: URL
        init(dir: URL) { self.dir = dir }
        deinit { try? FileManager.default.removeItem(at: dir) }
        func read(_ name: String) throws -> String {
            try String(contentsOf: dir.appendingPathComponent(name), encoding: .utf8)
        }
    }

    static func generate() throws -> Material {
        let material = Material(dir: try temporaryDirectory())
        let dir = material.dir
        try openssl(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "rsa.pem"], in: dir)
        try openssl(["rsa", "-in", "rsa.pem", "-traditional", "-out", "rsa1.pem"], in: dir)
        try openssl(["pkey", "-in", "rsa.pem", "-pubout", "-out", "rsa.pub"], in: dir)
        try openssl(["rsa", "-in", "rsa.pem", "-RSAPublicKey_out", "-out", "rsa1.pub"], in: dir)
        try openssl(
            ["req", "-new", "-x509", "-key", "rsa.pem", "-subj", "/CN=test", "-days", "1", "-out", "rsa.crt"], in: dir)
        try openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "ec.pem"], in: dir)
        try openssl(["ec", "-in", "ec.pem", "-out", "ec1.pem"], in: dir)
        try openssl(["pkey", "-in", "ec.pem", "-pubout", "-out", "ec.pub"], in: dir)
        try openssl(
            ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384", "-out", "ec384.pem"], in: dir)
        return material
    }

    @Test func rsaSignVerifyAllForms() throws {
        let m = try Self.generate()
        let pkcs8 = try PrivateKey(pem: m.read("rsa.pem"))
        let pkcs1 = try PrivateKey(pem: m.read("rsa1.pem"))
        #expect(pkcs8.kind == .rsa(bits: 2048))
        let spki = try PublicKey(pem: m.read("rsa.pub"))
        let fromPKCS1 = try PublicKey(pem: m.read("rsa1.pub"))
        let fromCert = try PublicKey(pem: m.read("rsa.crt"))
        #expect(spki.pem == fromPKCS1.pem && spki.pem == fromCert.pem)
        #expect(try pkcs8.publicKeyPEM() == spki.pem)
        #expect(try Certificate.publicKeyPEM(fromCertificatePEM: m.read("rsa.crt")) == spki.pem)
        #expect(spki.pem.hasPrefix("-----BEGIN PUBLIC KEY-----"))
        let data = Array("header.payload".utf8)
        for alg in [SigningAlgorithm.rs256, .rs384, .rs512] {
            let signature = try pkcs1.sign(data, algorithm: alg)
            #expect(signature.count == 256)
            #expect(spki.verify(signature: signature, data: data, algorithm: alg))
            #expect(!spki.verify(signature: signature, data: data + [0], algorithm: alg))
            // PKCS#1 v1.5 is deterministic: both key encodings give the same signature.
            #expect(try pkcs8.sign(data, algorithm: alg) == signature)
        }
        #expect(throws: CryptoError.self) { try pkcs8.sign(data, algorithm: .es256) }
        // The RS256 signature made by `openssl dgst` verifies too (independent implementation).
        try Data(data).write(to: m.dir.appendingPathComponent("msg"))
        let cliSignature = try openssl(["dgst", "-sha256", "-sign", "rsa.pem", "msg"], in: m.dir)
        #expect(spki.verify(signature: [UInt8](cliSignature), data: data, algorithm: .rs256))
    }

    @Test func ecSignVerifyRawSignatures() throws {
        let m = try Self.generate()
        let key = try PrivateKey(pem: m.read("ec.pem"))
        let sec1 = try PrivateKey(pem: m.read("ec1.pem"))
        #expect(key.kind == .ec(.p256) && sec1.kind == .ec(.p256))
        let pub = try PublicKey(pem: m.read("ec.pub"))
        let data = Array("header.payload".utf8)
        let signature = try key.sign(data, algorithm: .es256)
        #expect(signature.count == 64)
        #expect(pub.verify(signature: signature, data: data, algorithm: .es256))
        #expect(pub.verify(signature: try sec1.sign(data, algorithm: .es256), data: data, algorithm: .es256))
        #expect(!pub.verify(signature: signature, data: data, algorithm: .es384))
        #expect(!pub.verify(signature: signature, data: data, algorithm: .rs256))
        #expect(!pub.verify(signature: signature.dropLast(), data: data, algorithm: .es256))
        #expect(throws: CryptoError.self) { try key.sign(data, algorithm: .es384) }
        let p384 = try PrivateKey(pem: m.read("ec384.pem"))
        let sig384 = try p384.sign(data, algorithm: .es384)
        #expect(sig384.count == 96)
        #expect(try PublicKey(pem: p384.publicKeyPEM()).verify(signature: sig384, data: data, algorithm: .es384))
    }

    @Test func jwkComponentsBuildTheSameKey() throws {
        let m = try Self.generate()
        // RSA: modulus from the CLI, exponent 65537.
        let modulusLine = String(
            decoding: try openssl(["rsa", "-in", "rsa.pem", "-noout", "-modulus"], in: m.dir), as: UTF8.self)
        let modulus = unhex(
            modulusLine.replacingOccurrences(of: "Modulus=", with: "").trimmingCharacters(in: .whitespacesAndNewlines)
                .lowercased())
        let rsa = try PublicKey(rsaModulus: modulus, exponent: [1, 0, 1])
        #expect(rsa.pem == (try PublicKey(pem: m.read("rsa.pub")).pem))
        #expect(try PublicKey.pem(fromJWKModulus: [0] + modulus, exponent: [1, 0, 1]) == rsa.pem)
        #expect(throws: CryptoError.self) {
            try PublicKey(rsaModulus: Array(modulus.prefix(128)), exponent: [1, 0, 1])
        }
        // EC: the uncompressed point is the tail of the SPKI DER.
        let der = [UInt8](try openssl(["pkey", "-in", "ec.pem", "-pubout", "-outform", "DER"], in: m.dir))
        let point = Array(der.suffix(65))
        #expect(point[0] == 4)
        let x = Array(point[1...32]), y = Array(point[33...64])
        let ec = try PublicKey(curve: .p256, x: x, y: y)
        #expect(ec.pem == (try PublicKey(pem: m.read("ec.pub")).pem))
        var offCurve = y
        offCurve[31] ^= 1
        #expect(throws: CryptoError.self) { try PublicKey(curve: .p256, x: x, y: offCurve) }
        #expect(throws: CryptoError.self) { try PublicKey(curve: .p384, x: x, y: y) }
    }

    @Test func garbageIsRefusedWithOpenSSLText() throws {
        #expect(throws: CryptoError.self) {
            try PrivateKey(pem: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
        }
        #expect(throws: CryptoError.self) { try PublicKey(pem: "not a key") }
        #expect(throws: CryptoError.self) {
            try Certificate.publicKeyPEM(
                fromCertificatePEM: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
        }
        do {
            _ = try PublicKey(pem: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")
            Issue.record("accepted garbage")
        } catch {
            #expect(error.kind == .invalidKey)
        }
    }
}

@Suite struct KeyGenerationTests {
    @Test func generatedKeysRoundTripThroughPEM() throws {
        let data = Array("payload".utf8)
        for (key, alg) in [
            (try PrivateKey.generateRSA(), SigningAlgorithm.rs256), (try PrivateKey.generateEC(curve: .p256), .es256),
            (try PrivateKey.generateEC(curve: .p384), .es384),
        ] {
            let reloaded = try PrivateKey(pem: key.privateKeyPEM())
            #expect(try key.privateKeyPEM().hasPrefix("-----BEGIN PRIVATE KEY-----"))
            #expect(reloaded.kind == key.kind)
            let pub = try PublicKey(pem: key.publicKeyPEM())
            #expect(pub.verify(signature: try reloaded.sign(data, algorithm: alg), data: data, algorithm: alg))
        }
        #expect(throws: CryptoError.self) { try PrivateKey.generateRSA(bits: 1024) }
    }
}
