import ChildProcessIO
import Crypto
import Foundation
import PortcullisCore
import Testing
import Upstream

@testable import Storage

/// A stand-in for Google's OAuth2 token endpoint (and a GCS endpoint that only records what reached it): a
/// Python HTTP server on 127.0.0.1, port chosen by the OS, that exits when its stdin closes.
///
/// - `POST /token/<expires_in>` → 200 `{"access_token":"tok-<n>","expires_in":…}` (n counts exchanges);
/// - `POST /fail/<status>` → that status with an OAuth error body;
/// - anything else → 404 GCS-style error;
/// - `GET /seen` → every other request so far: method, path, Authorization, and the form fields.
final class GCSTokenServer: @unchecked Sendable {
    let process = Process()
    let port: Int
    private let stdin = Pipe()

    var base: String { "http://127.0.0.1:\(port)" }

    private init() throws {
        let script = FileManager.default.temporaryDirectory
            .appendingPathComponent("portcullis-token-server-\(UUID().uuidString).py")
        try Self.script.write(to: script, atomically: true, encoding: .utf8)
        let stdout = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path]
        process.standardOutput = stdout
        process.standardInput = stdin
        try process.run()
        var line = Data()
        while true {
            let byte = (stdout.fileHandleForReading.readChunkRetryingInterrupts(maxLength: 1) ?? Data())
            if byte.isEmpty || byte == Data([0x0A]) { break }
            line.append(byte)
        }
        try? FileManager.default.removeItem(at: script)
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5)) else {
            process.terminate()
            throw CocoaError(.fileReadCorruptFile)
        }
        self.port = port
    }

    deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }

    /// Starts the server off the cooperative pool (Python's start-up blocks the reading thread).
    static func start() async throws -> GCSTokenServer {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try GCSTokenServer() }) }
        }
    }

    /// What reached the server so far (`/seen` itself excluded).
    func seen() async throws -> [JSONValue] {
        let r = try await GCSTestEnvironment.client.fetch(UpstreamRequest(url: base + "/seen"), maxBytes: 1 << 20)
        return try JSONValue.parse(r.body).arrayValue ?? []
    }

    static let script = #"""
        import http.server, socketserver, sys, threading, os, json, urllib.parse

        seen = []
        lock = threading.Lock()

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def log_message(self, *a): pass

            def reply(self, status, obj):
                body = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def handle_any(self):
                n = int(self.headers.get("Content-Length", "0") or 0)
                body = self.rfile.read(n) if n else b""
                path = urllib.parse.urlsplit(self.path).path
                if path == "/seen":
                    with lock: self.reply(200, seen)
                    return
                form = {k: v[0] for k, v in urllib.parse.parse_qs(body.decode("latin-1")).items()}
                with lock:
                    seen.append({"method": self.command, "path": path, "authorization": self.headers.get("Authorization", ""),
                                 "contentType": self.headers.get("Content-Type", ""), "form": form})
                    count = sum(1 for s in seen if s["path"].startswith("/token/"))
                parts = path.split("/")
                if self.command == "POST" and len(parts) == 3 and parts[1] == "token":
                    self.reply(200, {"access_token": "tok-%d" % count, "expires_in": int(parts[2]), "token_type": "Bearer"})
                elif self.command == "POST" and len(parts) == 3 and parts[1] == "fail":
                    self.reply(int(parts[2]), {"error": "invalid_grant", "error_description": "Invalid JWT Signature."})
                else:
                    self.reply(404, {"error": {"code": 404, "message": "No such object"}})

            do_GET = do_POST = do_PUT = do_DELETE = handle_any

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True

        def watchdog():
            sys.stdin.read()
            os._exit(0)

        server = Server(("127.0.0.1", 0), Handler)
        print("PORT %d" % server.server_address[1], flush=True)
        threading.Thread(target=watchdog, daemon=True).start()
        server.serve_forever()
        """#
}

/// The service-account path (`GOOGLE_APPLICATION_CREDENTIALS`): RS256 JWT assertion → OAuth2 token exchange,
/// cached, refreshed before expiry, failures mapped to clear `StorageError`s — against a real local endpoint.
@Suite struct GCSTokenSourceTests {
    static let email = "portcullis@test-project.iam.gserviceaccount.com"

    /// An account with a fresh RSA key: the source and the public key that must verify its assertions.
    func account(_ tokenURI: String, client: UpstreamClient = GCSTestEnvironment.client) throws -> (
        GCSTokenSource, PublicKey
    ) {
        let key = try PrivateKey.generateRSA(bits: 2048)
        let source = try GCSTokenSource(
            clientEmail: Self.email, privateKeyPEM: try key.privateKeyPEM(),
            tokenURI: tokenURI, client: client)
        return (source, try PublicKey(pem: try key.publicKeyPEM()))
    }

    @Test func assertionIsSignedAndTheTokenCached() async throws {
        let server = try await GCSTokenServer.start()
        let tokenURI = server.base + "/token/3600"
        let (source, publicKey) = try account(tokenURI)
        let before = Timestamp.now().secondsSinceEpoch
        async let a = source.token()
        async let b = source.token()
        let first = try await [a, b]
        let later = try await source.token()
        #expect(first == ["tok-1", "tok-1"] && later == "tok-1")

        let seen = try await server.seen()
        #expect(seen.count == 1, "several requests, one exchange: \(seen)")
        let exchange = try #require(seen.first)
        #expect(exchange["method"]?.stringValue == "POST")
        #expect(exchange["contentType"]?.stringValue == "application/x-www-form-urlencoded")
        #expect(exchange["form"]?["grant_type"]?.stringValue == "urn:ietf:params:oauth:grant-type:jwt-bearer")
        let assertion = try #require(exchange["form"]?["assertion"]?.stringValue)
        let parts = assertion.split(separator: ".", omittingEmptySubsequences: false)
        try #require(parts.count == 3)
        let header = try JSONValue.parse(try #require(Base64URL.decode(parts[0])))
        let claims = try JSONValue.parse(try #require(Base64URL.decode(parts[1])))
        let signature = try #require(Base64URL.decode(parts[2]))
        #expect(header["alg"]?.stringValue == "RS256")
        #expect(header["typ"]?.stringValue == "JWT")
        #expect(claims["iss"]?.stringValue == Self.email)
        #expect(claims["aud"]?.stringValue == tokenURI)
        #expect(claims["scope"]?.stringValue == "https://www.googleapis.com/auth/devstorage.read_write")
        let iat = try #require(claims["iat"]?.int64Value)
        let exp = try #require(claims["exp"]?.int64Value)
        #expect(exp > iat && exp - iat <= 3600)
        #expect(iat >= before - 1 && iat <= Timestamp.now().secondsSinceEpoch + 1)
        let signed = Array("\(parts[0]).\(parts[1])".utf8)
        #expect(publicKey.verify(signature: signature, data: signed, algorithm: .rs256))
        // The check can fail: a flipped bit, or another key, does not verify.
        var tampered = signature
        tampered[tampered.count / 2] ^= 0x01
        #expect(!publicKey.verify(signature: tampered, data: signed, algorithm: .rs256))
        let (_, otherKey) = try account(tokenURI)
        #expect(!otherKey.verify(signature: signature, data: signed, algorithm: .rs256))
    }

    /// A token within the five-minute margin of its expiry is never used: each call exchanges a new one.
    @Test func tokenNearExpiryIsRefreshed() async throws {
        let server = try await GCSTokenServer.start()
        let (source, _) = try account(server.base + "/token/300")
        #expect(try await source.token() == "tok-1")
        #expect(try await source.token() == "tok-2")
        #expect(try await server.seen().count == 2)
    }

    /// The backend puts the cached token on every GCS request.
    @Test func backendSendsTheBearerToken() async throws {
        let server = try await GCSTokenServer.start()
        let key = try PrivateKey.generateRSA(bits: 2048)
        let configuration = GCSBackendConfiguration(
            bucket: "b", endpoint: server.base,
            credentials: .serviceAccount(
                clientEmail: Self.email, privateKeyPEM: try key.privateKeyPEM(),
                tokenURI: server.base + "/token/3600"))
        let backend = try GCSBackend(configuration: configuration, client: GCSTestEnvironment.client)
        for name in ["a", "b/c"] {
            do {
                _ = try await backend.metadata(of: ObjectPath(bucket: "b", name: name))
                Issue.record("the recording endpoint has no objects")
            } catch {
                #expect(error.isNotFound)
            }
        }
        let seen = try await server.seen()
        #expect(
            seen.map { $0["path"]?.stringValue ?? "" } == [
                "/token/3600", "/storage/v1/b/b/o/a", "/storage/v1/b/b/o/b%2Fc",
            ])
        #expect(seen.dropFirst().allSatisfy { $0["authorization"]?.stringValue == "Bearer tok-1" })
    }

    /// Refusals are `.upstreamDenied` with the endpoint's reason; outages are `.unavailable`; nothing is cached.
    @Test func tokenEndpointFailuresMapToClearErrors() async throws {
        let server = try await GCSTokenServer.start()
        let client = UpstreamClient()  // its own circuit breaker: these failures must not trip other tests'
        let (denied, _) = try account(server.base + "/fail/400", client: client)
        for _ in 0..<2 {
            do {
                _ = try await denied.token()
                Issue.record("a refused exchange must fail")
            } catch {
                guard case .upstreamDenied(let why) = error else { Issue.record("got \(error)"); continue }
                #expect(why.contains("400") && why.contains("Invalid JWT Signature."), "\(why)")
            }
        }
        #expect(try await server.seen().count == 2)
        let (down, _) = try account(server.base + "/fail/503", client: client)
        await #expect { try await down.token() } throws: { error in
            if case .unavailable? = error as? StorageError { true } else { false }
        }
        let (unreachable, _) = try account("http://127.0.0.1:\(closedLoopbackPort())/token", client: client)
        await #expect { try await unreachable.token() } throws: { error in
            if case .unavailable? = error as? StorageError { true } else { false }
        }
        // Through the backend, the caller sees the same error instead of an unauthenticated request.
        let key = try PrivateKey.generateRSA(bits: 2048)
        let backend = try GCSBackend(
            configuration: GCSBackendConfiguration(
                bucket: "b", endpoint: server.base,
                credentials: .serviceAccount(
                    clientEmail: Self.email, privateKeyPEM: try key.privateKeyPEM(),
                    tokenURI: server.base + "/fail/401")), client: client)
        await #expect { _ = try await backend.metadata(of: ObjectPath(bucket: "b", name: "x")) } throws: { error in
            if case .upstreamDenied? = error as? StorageError { true } else { false }
        }
        #expect(try await server.seen().filter { $0["path"]?.stringValue?.hasPrefix("/storage/") == true }.isEmpty)
    }

    @Test func malformedKeyIsRefusedUpFront() {
        #expect(throws: StorageError.self) {
            _ = try GCSTokenSource(
                clientEmail: Self.email,
                privateKeyPEM: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
                tokenURI: "http://127.0.0.1:1/token", client: GCSTestEnvironment.client)
        }
    }
}

/// A loopback port nothing listens on (bound, then closed).
func closedLoopbackPort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}
