import Crypto
import Foundation
import PortcullisCore
import Testing

@testable import Auth

@Suite struct KeySourceTests {
    static func jwks(_ entries: [(pem: String, kid: String)]) -> String {
        JSONValue.object(["keys": .array(entries.map { TestKeys.jwk(publicPEM: $0.pem, kid: $0.kid) })]).encoded()
    }

    static func fastOptions() -> KeySourceOptions {
        var options = KeySourceOptions()
        options.minimumRefreshSeconds = 0.2
        options.unknownKeyRefetchSeconds = 0
        options.retrySeconds = 0.1
        options.fileCheckSeconds = 0.1
        return options
    }

    /// Polls `condition` every 50 ms until it holds or `seconds` pass.
    static func eventually(_ seconds: Double = 10, _ condition: () async -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return await condition()
    }

    static func accepts(_ auth: Authenticator, _ token: String) async -> Bool {
        (try? await auth.authenticate(authorization: "Bearer \(token)")) != nil
    }

    @Test func rotationAgainstALoopbackJWKSServer() async throws {
        let keys = TestKeys.shared
        let server = try LoopbackKeyServer(maxAge: 1)
        try server.write("jwks.json", Self.jwks([(keys.rsaPublic, "k1")]))
        let fetcher = CountingKeyFetcher()
        let sink = CapturingLogSink()
        let source = KeySource.from(
            spec: server.url("jwks.json"), fetcher: fetcher, logger: Logger(sink: sink),
            options: Self.fastOptions())
        #expect(source.location == .url(server.url("jwks.json")))
        let auth = Authenticator(
            configuration: testConfiguration, keySource: source, metrics: MetricsRegistry(),
            logger: Logger(sink: sink, minimumLevel: .debug))
        await auth.start()
        defer { auth.stop() }
        let t1 = TokenFactory.rsa(kid: "k1", payload: TokenFactory.claims(sub: "one"))
        let t2 = TokenFactory.rsa(keys.rsa2Private, kid: "k2", payload: TokenFactory.claims(sub: "two"))
        #expect(try await auth.authenticate(authorization: "Bearer \(t1)")?.uid == "one")
        #expect(auth.cachedTokenCount == 1)

        // A new kid is picked up by the unknown-kid refetch at once.
        try server.write("jwks.json", Self.jwks([(keys.rsaPublic, "k1"), (keys.rsa2Public, "k2")]))
        #expect(try await auth.authenticate(authorization: "Bearer \(t2)")?.uid == "two")

        // A removed key stops working after the background refresh, cached tokens included.
        try server.write("jwks.json", Self.jwks([(keys.rsa2Public, "k2")]))
        #expect(await Self.eventually { await !Self.accepts(auth, t1) })
        do {
            _ = try await auth.authenticate(authorization: "Bearer \(t1)")
        } catch {
            #expect(error.reason == .unknownKey)
        }
        #expect(await Self.accepts(auth, t2))

        // A broken document or a failing server keeps the last good set.
        try server.write("jwks.json", "{\"keys\": 17}")
        guard case .failure = await source.refresh() else { Issue.record("garbage accepted"); return }
        try FileManager.default.removeItem(at: server.directory.appendingPathComponent("jwks.json"))
        guard case .failure = await source.refresh() else { Issue.record("404 accepted"); return }
        #expect(source.current?.key(id: "k2") != nil)
        let t2b = TokenFactory.rsa(keys.rsa2Private, kid: "k2", payload: TokenFactory.claims(sub: "two-b"))
        #expect(try await auth.authenticate(authorization: "Bearer \(t2b)")?.uid == "two-b")
        let log = sink.lines.joined()
        #expect(log.contains("jwt keys loaded") && log.contains("keeping the previous keys"))
        for token in [t1, t2, t2b] { #expect(!log.contains(token.split(separator: ".")[2])) }
    }

    @Test func unknownKidRefetchIsRateLimited() async throws {
        let keys = TestKeys.shared
        let server = try LoopbackKeyServer(maxAge: 3600)
        try server.write("jwks.json", Self.jwks([(keys.rsaPublic, "k1")]))
        let fetcher = CountingKeyFetcher()
        var options = Self.fastOptions()
        options.unknownKeyRefetchSeconds = 60
        let source = KeySource.from(
            spec: server.url("jwks.json"), fetcher: fetcher, logger: .disabled, options: options)
        let auth = Authenticator(
            configuration: testConfiguration, keySource: source, metrics: MetricsRegistry(), logger: .disabled)
        await auth.start()
        defer { auth.stop() }
        #expect(fetcher.requests == 1)
        try server.write("jwks.json", Self.jwks([(keys.rsaPublic, "k1"), (keys.rsa2Public, "k2")]))
        for i in 0..<20 {
            let token = TokenFactory.rsa(keys.rsa2Private, kid: "k2", payload: TokenFactory.claims(sub: "u\(i)"))
            #expect(!(await Self.accepts(auth, token)))
        }
        // Within a minute of the last fetch, unknown kids cause no fetch at all.
        #expect(fetcher.requests == 1)
    }

    @Test func fileSourceReloadsWhenTheFileChanges() async throws {
        let keys = TestKeys.shared
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pc-keyfile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("keys.pem").path
        try Data(keys.rsaPublic.utf8).write(to: URL(fileURLWithPath: path))
        let source = KeySource.from(
            spec: path, fetcher: CountingKeyFetcher(), logger: .disabled, options: Self.fastOptions())
        #expect(source.location == .file(path: path))
        let auth = Authenticator(
            configuration: testConfiguration, keySource: source, metrics: MetricsRegistry(), logger: .disabled)
        await auth.start()
        defer { auth.stop() }
        let t1 = TokenFactory.rsa(payload: TokenFactory.claims(sub: "one"))
        let t2 = TokenFactory.rsa(keys.rsa2Private, payload: TokenFactory.claims(sub: "two"))
        #expect(await Self.accepts(auth, t1))
        #expect(!(await Self.accepts(auth, t2)))
        try Data((keys.rsa2Public + keys.rsaCertificate).utf8).write(to: URL(fileURLWithPath: path + ".new"))
        #expect(rename(path + ".new", path) == 0)
        #expect(await Self.eventually { await Self.accepts(auth, t2) })
        #expect(await Self.accepts(auth, t1))
    }

    @Test func upstreamFetcherReadsBodyAndMaxAge() async throws {
        let server = try LoopbackKeyServer(maxAge: 1234)
        let document = Self.jwks([(TestKeys.shared.ecPublic, "e1")])
        try server.write("jwks.json", document)
        let (body, maxAge) = try await CountingKeyFetcher().fetch(server.url("jwks.json"))
        #expect(body == Array(document.utf8))
        #expect(maxAge == 1234)
        let crossCheck = try await URLSessionKeyFetcher().fetch(server.url("jwks.json"))
        #expect(crossCheck.body == body && crossCheck.maxAgeSeconds == 1234)
        await #expect(throws: (any Error).self) { try await CountingKeyFetcher().fetch(server.url("missing.json")) }
    }

    @Test func cacheControlParsing() {
        #expect(CacheControl.maxAge("public, max-age=19462, must-revalidate, no-transform") == 19462)
        #expect(CacheControl.maxAge("max-age=0") == 0)
        #expect(CacheControl.maxAge("no-store") == 0)
        #expect(CacheControl.maxAge("max-age=abc") == nil)
        #expect(CacheControl.maxAge(nil) == nil)
        #expect(CacheControl.maxAge("private") == nil)
    }

    @Test func specDetection() {
        let fetcher = CountingKeyFetcher()
        #expect(
            KeySource.from(spec: "HTTPS://example.test/jwks", fetcher: fetcher, logger: .disabled).location
                == .url("HTTPS://example.test/jwks"))
        #expect(
            KeySource.from(spec: "./keys.pem", fetcher: fetcher, logger: .disabled).location
                == .file(path: "./keys.pem"))
    }
}

extension KeySourceTests {
    @Test func failedInitialLoadIsRetriedSoon() async throws {
        let server = try LoopbackKeyServer(maxAge: 3600)
        let source = KeySource.from(
            spec: server.url("jwks.json"), fetcher: CountingKeyFetcher(), logger: .disabled,
            options: Self.fastOptions())
        let auth = Authenticator(
            configuration: testConfiguration, keySource: source, metrics: MetricsRegistry(), logger: .disabled)
        await auth.start()
        defer { auth.stop() }
        let token = TokenFactory.rsa(kid: "k1", payload: TokenFactory.claims())
        do {
            _ = try await auth.authenticate(authorization: "Bearer \(token)")
            Issue.record("accepted without keys")
        } catch {
            #expect(error.reason == .noKeys)
        }
        try server.write("jwks.json", Self.jwks([(TestKeys.shared.rsaPublic, "k1")]))
        #expect(await Self.eventually { await Self.accepts(auth, token) })
    }
}
