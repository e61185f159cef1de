import PortcullisCore
import Testing

@testable import HTTPServer

#if canImport(Glibc)
import Glibc
#endif

/// The connection machine over a TLS session (`TLSChannel`), with a scripted session in place of OpenSSL (this
/// target links no C library; Crypto's tests and tests/blackbox/test_tls.py cover the real one). The script
/// speaks plaintext over the socket pair: the client must send `HELLO\n` before anything else (the handshake),
/// the server then sends `WELCOME\n`; `shutdown` sends `CLOSE_NOTIFY`. Knobs make it return the wants a real
/// session returns. The clock is `EmbeddedEventLoop`'s.
@Suite struct TLSConnectionTests {
    static let ok = ImmediateResponder { request in
        HTTPResponse(status: 200, body: .bytes(Array("hello \(request.target)".utf8)))
    }

    @Test func handshakeIsBoundByTheHeaderTimeout() {
        let embedded = EmbeddedConnection(responder: Self.ok, tls: { ScriptedTLSSession(fd: $0) })
        guard case .readingHead(let reading) = embedded.state else { Issue.record("\(embedded.kind)"); return }
        embedded.send("HEL")  // half a handshake
        #expect(embedded.kind == .readingHead)
        embedded.loop.advance(to: reading.deadline - 1)
        #expect(embedded.kind == .readingHead)
        embedded.loop.advance(to: reading.deadline)
        #expect(embedded.kind == .closed)
        #expect(embedded.output().isEmpty, "closed silently, like a connection that sent nothing")
    }

    @Test func requestsAfterTheHandshakeAreServedOverTheSession() {
        let session = SessionSlot()
        let embedded = EmbeddedConnection(responder: Self.ok, tls: { session.make($0) })
        embedded.send("HELLO\nGET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n")
        let output = embedded.output()
        #expect(output.hasPrefix("WELCOME\nHTTP/1.1 200 OK\r\n"))
        #expect(output.contains("hello /a") && output.hasSuffix("hello /b"))
        #expect(session.value?.shutdowns == 0)
        #expect(embedded.kind == .readingHead)
    }

    /// Plaintext the session holds after the socket is drained is read without waiting for readiness.
    @Test func plaintextHeldInsideTheSessionIsRead() {
        let session = SessionSlot()
        let embedded = EmbeddedConnection(
            responder: Self.ok,
            tls: {
                let made = session.make($0)
                made.piece = 7  // one "record" is decrypted into the session, handed out 7 bytes at a time
                return made
            })
        embedded.send("HELLO\nGET /held HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(embedded.output().hasSuffix("hello /held"))
    }

    /// A read that must write (a handshake flight meeting a full socket) waits for writability and is repeated.
    @Test func readWantingWriteWaitsForWritability() {
        let session = SessionSlot()
        let embedded = EmbeddedConnection(
            responder: Self.ok,
            tls: {
                let made = session.make($0)
                made.blockedFlights = 1
                return made
            })
        embedded.write("HELLO\nGET /w HTTP/1.1\r\nHost: x\r\n\r\n")
        embedded.loop.runBatch()
        #expect(embedded.connection.tls?.retry == .write)
        #expect(embedded.connection.registration.applied == .write, "waits for writability, not for more input")
        embedded.loop.run()
        #expect(embedded.output().hasSuffix("hello /w"))
        #expect(embedded.connection.tls?.retry == [])
    }

    /// A write that must read first waits for readability only (its own direction would spin), then goes on.
    @Test func writeWantingReadWaitsForReadability() {
        let session = SessionSlot()
        let embedded = EmbeddedConnection(
            responder: Self.ok,
            tls: {
                let made = session.make($0)
                made.writesWaitForPeerByte = true
                return made
            })
        embedded.send("HELLO\nGET /r HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(embedded.output() == "WELCOME\n")
        #expect(embedded.kind == .exchanging)
        #expect(embedded.connection.registration.applied == .read)
        let attempts = session.value?.writeAttempts ?? 0
        embedded.loop.run()
        #expect(session.value?.writeAttempts == attempts, "no retry while the socket has nothing to read")
        embedded.send("K")
        #expect(embedded.output().hasSuffix("hello /r"))
        #expect(embedded.kind == .readingHead)
    }

    @Test func gracefulCloseSendsCloseNotify() {
        let session = SessionSlot()
        let embedded = EmbeddedConnection(responder: Self.ok, tls: { session.make($0) })
        embedded.send("HELLO\nGET /last HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(embedded.output().hasSuffix("hello /lastCLOSE_NOTIFY"))
        #expect(session.value?.shutdowns == 1)
        #expect(embedded.kind == .lingering)
    }

    @Test func peerEndingTheSessionClosesTheConnection() {
        let embedded = EmbeddedConnection(responder: Self.ok, tls: { ScriptedTLSSession(fd: $0) })
        embedded.send("HELLO\n")
        embedded.shutdownClient()
        embedded.loop.run()
        #expect(embedded.kind == .closed)
    }

    @Test func failedSessionClosesTheConnection() {
        let embedded = EmbeddedConnection(responder: Self.ok, tls: { ScriptedTLSSession(fd: $0) })
        embedded.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")  // not a handshake
        #expect(embedded.kind == .closed)
        #expect(!embedded.output().contains("HTTP/1.1"), "nothing is answered in plaintext through a failed session")
    }

    /// A client speaking plain HTTP gets a plaintext 400 (not a hang, not a TLS alert it cannot read).
    @Test func plainHTTPGetsAPlaintext400() {
        let session = SessionSlot()
        let embedded = EmbeddedConnection(
            responder: Self.ok,
            tls: {
                let made = session.make($0)
                made.plainHTTPDetected = true
                return made
            })
        embedded.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        let output = embedded.output()
        #expect(output.hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
        #expect(output.contains("this port speaks HTTPS"))
        #expect(!output.contains("CLOSE_NOTIFY"), "no TLS record on a plaintext answer")
        #expect(embedded.kind == .lingering || embedded.kind == .closed)
    }

    /// No `sendfile` under TLS: a file body is read in `responseChunkBytes` pieces, one at a time.
    @Test func fileBodiesAreReadInBoundedPieces() throws {
        let path = "/tmp/pc-tls-file-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        let content = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
        defer { unlink(path) }
        #expect(content.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } == content.count)
        let responder = ImmediateResponder { _ in
            HTTPResponse(status: 200, body: .file(FileRegion(descriptor: fd, offset: 1000, length: 250_000)))
        }
        let session = SessionSlot()
        let embedded = EmbeddedConnection(
            configure: { $0.responseChunkBytes = 16 * 1024 }, responder: responder, tls: { session.make($0) })
        embedded.write("HELLO\nGET /f HTTP/1.1\r\nHost: x\r\n\r\n")
        var received: [UInt8] = []
        var largestWrite = 0
        for _ in 0..<10_000 {
            embedded.loop.run()
            received += embedded.outputBytes()
            largestWrite = max(largestWrite, session.value?.largestWrite ?? 0)
            if embedded.kind == .readingHead { break }
        }
        close(fd)
        #expect(received.count > 250_000)
        let bodyStart = received.count - 250_000
        #expect(Array(received[bodyStart...]) == Array(content[1000..<251_000]))
        #expect(largestWrite <= 16 * 1024, "one piece per write, never the file")
    }
}

/// Holds the session a connection's factory made, for the test to inspect.
final class SessionSlot {
    var value: ScriptedTLSSession?

    func make(_ fd: Int32) -> ScriptedTLSSession {
        let made = ScriptedTLSSession(fd: fd)
        value = made
        return made
    }
}

/// A plaintext stand-in for a TLS session (see `TLSConnectionTests`).
final class ScriptedTLSSession: TLSSession {
    let fd: Int32
    private var handshake: [UInt8] = []
    private var established = false
    private var welcomed = false
    private var plaintext: [UInt8] = []
    /// How many plaintext bytes one `read` hands out (the rest stays pending).
    var piece = Int.max
    /// Times the server's handshake flight meets a "full socket" (`wantWrite` from a read).
    var blockedFlights = 0
    /// The first bytes are a plain HTTP request line (what OpenSSL reports as `SSL_R_HTTP_REQUEST`).
    var plainHTTPDetected = false
    /// Writes wait for one byte from the peer (`wantRead` from a write), as a key update would.
    var writesWaitForPeerByte = false
    private(set) var writeAttempts = 0
    /// The largest buffer a `write` was handed: what the connection held in user space at once.
    private(set) var largestWrite = 0
    private(set) var shutdowns = 0
    private(set) var failureReason: String?

    init(fd: Int32) { self.fd = fd }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> TLSIOResult {
        if plainHTTPDetected {
            var head = [UInt8](repeating: 0, count: 5)
            _ = head.withUnsafeMutableBytes { recv(fd, $0.baseAddress, 5, Int32(MSG_DONTWAIT)) }
            return .plainHTTP
        }
        if !established {
            while handshake.count < 6 {
                var byte: UInt8 = 0
                let n = recv(fd, &byte, 1, Int32(MSG_DONTWAIT))
                if n == 0 { return .closed }
                if n < 0 { return .wantRead }
                handshake.append(byte)
            }
            guard handshake.elementsEqual("HELLO\n".utf8) else {
                failureReason = "not a handshake"
                return .failed
            }
            established = true
        }
        if !welcomed {
            if blockedFlights > 0 {
                blockedFlights -= 1
                return .wantWrite
            }
            let welcome = Array("WELCOME\n".utf8)
            _ = welcome.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            welcomed = true
        }
        if plaintext.isEmpty {
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n == 0 { return .closed }
            if n < 0 { return errno == EAGAIN ? .wantRead : .failed }
            plaintext = Array(chunk[0..<n])
        }
        let count = min(buffer.count, piece, plaintext.count)
        buffer.copyMemory(from: UnsafeRawBufferPointer(start: plaintext, count: count))
        plaintext.removeFirst(count)
        return .bytes(count)
    }

    var pendingPlaintext: Int { plaintext.count }

    func write(_ buffer: UnsafeRawBufferPointer) -> TLSIOResult {
        writeAttempts += 1
        largestWrite = max(largestWrite, buffer.count)
        if writesWaitForPeerByte {
            var byte: UInt8 = 0
            guard recv(fd, &byte, 1, Int32(MSG_DONTWAIT)) == 1 else { return .wantRead }
            writesWaitForPeerByte = false
        }
        let count = min(buffer.count, 16 * 1024)  // one record at a time, as SSL_write with partial writes
        let n = send(fd, buffer.baseAddress, count, Int32(MSG_NOSIGNAL))
        if n < 0 { return errno == EAGAIN ? .wantWrite : .failed }
        return .bytes(n)
    }

    func shutdown() {
        shutdowns += 1
        let notify = Array("CLOSE_NOTIFY".utf8)
        _ = notify.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }
}
