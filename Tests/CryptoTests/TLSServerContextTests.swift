import Crypto
import Foundation
import PortcullisCore
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The TLS server context against real OpenSSL: certificate/key loading and replacement, and the session
/// outcomes a connection acts on (waiting for the peer, a peer that is not speaking TLS, a peer that left).
@Suite struct TLSServerContextTests {
    /// A self-signed P-256 certificate and its key, made by the `openssl` CLI.
    static func pair(serial: Int, in directory: URL) throws -> (cert: [UInt8], key: [UInt8]) {
        try openssl(
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                "key-\(serial).pem", "-out", "cert-\(serial).pem", "-days", "1", "-subj", "/CN=test", "-set_serial",
                "\(serial)",
            ], in: directory)
        let cert = try Data(contentsOf: directory.appendingPathComponent("cert-\(serial).pem"))
        let key = try Data(contentsOf: directory.appendingPathComponent("key-\(serial).pem"))
        return ([UInt8](cert), [UInt8](key))
    }

    @Test func loadsAMatchingPairAndRefusesBadOnes() throws {
        let directory = try temporaryDirectory()
        let first = try Self.pair(serial: 1, in: directory)
        let second = try Self.pair(serial: 2, in: directory)
        let context = try TLSServerContext(certificatePEM: first.cert, privateKeyPEM: first.key)
        #expect(throws: CryptoError.self) {
            try TLSServerContext(certificatePEM: Array("garbage".utf8), privateKeyPEM: first.key)
        }
        do {
            _ = try TLSServerContext(certificatePEM: first.cert, privateKeyPEM: second.key)
            Issue.record("a key of another certificate was accepted")
        } catch {
            #expect(error.description.contains("does not match the certificate"))
        }
        // A bad replacement throws and leaves the context usable; a good one is taken.
        #expect(throws: CryptoError.self) {
            try context.replace(certificatePEM: second.cert, privateKeyPEM: Array("no key".utf8))
        }
        try context.replace(certificatePEM: second.cert, privateKeyPEM: second.key)
    }

    /// A session over one end of a socket pair, the test holding the other end.
    static func session() throws -> (session: any TLSSession, peer: Int32, own: Int32) {
        let directory = try temporaryDirectory()
        let pair = try Self.pair(serial: 3, in: directory)
        let context = try TLSServerContext(certificatePEM: pair.cert, privateKeyPEM: pair.key)
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
        let session = try #require(context.makeSession(descriptor: fds[0]))
        return (session, fds[1], fds[0])
    }

    @Test func handshakeWaitsForThePeer() throws {
        let (session, peer, own) = try Self.session()
        defer { close(peer); close(own) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let result = buffer.withUnsafeMutableBytes { session.read(into: $0) }
        #expect(result == .wantRead)
        #expect(session.failureReason == nil)
    }

    @Test func plainHTTPOnTheTLSSocketIsRecognised() throws {
        let (session, peer, own) = try Self.session()
        defer { close(peer); close(own) }
        let request = Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        #expect(request.withUnsafeBytes { write(peer, $0.baseAddress, $0.count) } == request.count)
        var buffer = [UInt8](repeating: 0, count: 4096)
        let result = buffer.withUnsafeMutableBytes { session.read(into: $0) }
        #expect(result == .plainHTTP)
    }

    @Test func garbageOnTheTLSSocketFailsWithAReason() throws {
        let (session, peer, own) = try Self.session()
        defer { close(peer); close(own) }
        let junk: [UInt8] = [0x16, 0x03, 0x01, 0x00, 0x05, 1, 2, 3, 4, 5]  // a handshake record of nonsense
        #expect(junk.withUnsafeBytes { write(peer, $0.baseAddress, $0.count) } == junk.count)
        var buffer = [UInt8](repeating: 0, count: 4096)
        let result = buffer.withUnsafeMutableBytes { session.read(into: $0) }
        #expect(result == .failed)
        #expect(session.failureReason?.isEmpty == false)
    }

    @Test func aPeerThatLeavesEndsTheSession() throws {
        let (session, peer, own) = try Self.session()
        defer { close(own) }
        close(peer)
        var buffer = [UInt8](repeating: 0, count: 4096)
        let result = buffer.withUnsafeMutableBytes { session.read(into: $0) }
        #expect(result == .closed || result == .failed)
        #expect(result != .wantRead)
    }
}
