import PortcullisCore
import Testing

@testable import Gateway

@Suite struct ConfigurationParserTests {
    private func parse(_ arguments: [String], _ environment: [String: String] = [:]) throws(ConfigurationError)
        -> GatewayConfiguration
    {
        try ConfigurationParser.parse(arguments: arguments, environment: environment)
    }

    @Test func defaultsMatchTheContract() throws {
        let config = try parse([])
        #expect(config.listen == ListenAddress(host: "127.0.0.1", port: 8080))
        #expect(config.buckets == [BucketBinding(name: "default-bucket", backend: .file(directory: "./data"))])
        #expect(config.rulesFile == nil)
        #expect(config.corsOrigins == .any)
        #expect(config.maxObjectBytes == 5 * 1024 * 1024 * 1024 * 1024)
        #expect(config.logFormat == .json)
        #expect(config.logLevel == .info)
        #expect(config.jwtLeewaySeconds == 60)
        #expect(config.drainTimeout == .seconds(25))
        #expect(config.uploadIdleTimeout == .seconds(86_400))
        #expect(config.signingKeyFile == nil && config.adminKeyFile == nil && config.publicURL == nil)
    }

    @Test func devTrustEmulatorOwnerIsAnOffByDefaultSwitch() throws {
        #expect(try parse([]).devTrustEmulatorOwner == false)
        #expect(try parse(["--dev-trust-emulator-owner", "--listen", ":9"]).devTrustEmulatorOwner)
        #expect(try parse(["--dev-trust-emulator-owner=false"]).devTrustEmulatorOwner == false)
        #expect(try parse([], ["PORTCULLIS_DEV_TRUST_EMULATOR_OWNER": "true"]).devTrustEmulatorOwner)
        #expect(try parse([], ["PORTCULLIS_DEV_TRUST_EMULATOR_OWNER": "0"]).devTrustEmulatorOwner == false)
        #expect(throws: ConfigurationError.self) {
            try parse([], ["PORTCULLIS_DEV_TRUST_EMULATOR_OWNER": "maybe"])
        }
    }

    @Test func everyOptionFromFlags() throws {
        let config = try parse([
            "--listen", "[::1]:9000", "--bucket", "a=file:/tmp/a", "--bucket=b=gs://real-b", "--bucket",
            "c=s3://c.bucket",
            "--rules", "storage.rules", "--jwt-keys", "https://example.com/jwks.json", "--jwt-issuer", "iss",
            "--jwt-audience", "aud", "--jwt-hmac-secret", "hs.key", "--jwt-leeway", "5", "--signing-key", "sk",
            "--admin-key", "ak", "--public-url", "https://files.example.com/", "--cors-origins",
            "https://a.example, http://localhost:5173", "--max-object-bytes", "100MiB", "--log-format", "text",
            "--log-level", "warn", "--drain-timeout", "500ms", "--upload-idle-timeout", "2h", "--header-timeout", "3",
            "--idle-timeout", "1.5", "--max-connections", "64",
        ])
        #expect(config.listen == ListenAddress(host: "::1", port: 9000))
        #expect(config.listen.description == "[::1]:9000")
        #expect(config.buckets.map(\.description) == ["a=file:/tmp/a", "b=gs://real-b", "c=s3://c.bucket"])
        #expect(config.rulesFile == "storage.rules")
        #expect(config.jwtKeys == "https://example.com/jwks.json")
        #expect(config.jwtIssuer == "iss" && config.jwtAudience == "aud" && config.jwtHMACSecretFile == "hs.key")
        #expect(config.jwtLeewaySeconds == 5)
        #expect(config.signingKeyFile == "sk" && config.adminKeyFile == "ak")
        #expect(config.publicURL == "https://files.example.com")
        #expect(config.corsOrigins == .only(["https://a.example", "http://localhost:5173"]))
        #expect(config.maxObjectBytes == 100 << 20)
        #expect(config.logFormat == .text && config.logLevel == .warning)
        #expect(config.drainTimeout == .milliseconds(500))
        #expect(config.uploadIdleTimeout == .seconds(7200))
        #expect(config.headerTimeout == .seconds(3) && config.idleTimeout == .milliseconds(1500))
        #expect(config.maxConnections == 64)
    }

    @Test func environmentIsUsedWhenNoFlag() throws {
        let config = try parse(
            [],
            [
                "PORTCULLIS_LISTEN": "0.0.0.0:8081", "PORTCULLIS_BUCKETS": "x=file:./x, y=s3://y",
                "PORTCULLIS_RULES": "r.rules", "PORTCULLIS_FIREBASE_PROJECT": "demo-project",
                "PORTCULLIS_SIGNING_KEY_FILE": "/run/sk", "PORTCULLIS_ADMIN_KEY_FILE": "/run/ak",
                "PORTCULLIS_MAX_OBJECT_BYTES": "1024", "PORTCULLIS_LOG_FORMAT": "text", "PORTCULLIS_CORS_ORIGINS": "*",
                "PORTCULLIS_DRAIN_TIMEOUT": "0", "PORTCULLIS_PUBLIC_URL": "http://gw:8080",
            ])
        #expect(config.listen == ListenAddress(host: "0.0.0.0", port: 8081))
        #expect(config.buckets.map(\.description) == ["x=file:./x", "y=s3://y"])
        #expect(config.rulesFile == "r.rules" && config.firebaseProject == "demo-project")
        #expect(config.signingKeyFile == "/run/sk" && config.adminKeyFile == "/run/ak")
        #expect(config.maxObjectBytes == 1024 && config.logFormat == .text)
        #expect(config.drainTimeout == .zero && config.publicURL == "http://gw:8080")
    }

    @Test func flagsWinOverEnvironment() throws {
        let config = try parse(
            ["--listen", "127.0.0.1:0", "--bucket", "f=file:./f", "--log-format", "json"],
            [
                "PORTCULLIS_LISTEN": "0.0.0.0:9", "PORTCULLIS_BUCKETS": "e=file:./e,g=gs://g",
                "PORTCULLIS_LOG_FORMAT": "text",
            ])
        #expect(config.listen.port == 0 && config.listen.host == "127.0.0.1")
        #expect(config.buckets.map(\.name) == ["f"])
        #expect(config.logFormat == .json)
    }

    @Test func aBadEnvValueIsNamedByItsVariable() {
        #expect(throws: ConfigurationError.self) { try parse([], ["PORTCULLIS_LOG_FORMAT": "xml"]) }
        do {
            _ = try parse([], ["PORTCULLIS_LOG_FORMAT": "xml"])
        } catch {
            #expect(error.description.hasPrefix("invalid PORTCULLIS_LOG_FORMAT value \"xml\""))
        }
        // A bad env value does not matter when the flag overrides it.
        #expect((try? parse(["--log-format", "text"], ["PORTCULLIS_LOG_FORMAT": "xml"])) != nil)
    }

    @Test(arguments: [
        ["--listen", "8080"], ["--listen", "localhost:99999"], ["--listen", "::1:80"], ["--listen", "[::1]"],
        ["--listen", "[zz]:80"], ["--listen", "host name:80"], ["--listen", "1.2.3.4:-1"],
        ["--bucket", "nameonly"], ["--bucket", "=file:./x"], ["--bucket", "a=ftp://x"], ["--bucket", "a=file:"],
        ["--bucket", "a=gs://"], ["--bucket", "a=s3://b/c"], ["--bucket", "a b=file:./x"],
        ["--bucket", "a=file:./x", "--bucket", "a=file:./y"],
        ["--jwt-keys", "ftp://keys"], ["--jwt-leeway", "-1"], ["--jwt-leeway", "3601"], ["--jwt-leeway", "1m"],
        ["--firebase-project", "Bad_Project"], ["--firebase-project", "p", "--jwt-issuer", "x"],
        ["--jwt-issuer", "x"], ["--public-url", "files.example.com"], ["--public-url", "https://x/?a=b"],
        ["--public-url", "https://x/\u{301}?a=b"], ["--public-url", "https://caf\u{E9}.example"],
        ["--public-url", "https://x/a b"],
        ["--cors-origins", "example.com"], ["--cors-origins", "https://a/"], ["--cors-origins", ","],
        ["--max-object-bytes", "0"], ["--max-object-bytes", "-5"], ["--max-object-bytes", "5PB"],
        ["--max-object-bytes", "99999999999TiB"], ["--log-format", "xml"], ["--log-level", "loud"],
        ["--drain-timeout", "-1"], ["--drain-timeout", "soon"], ["--upload-idle-timeout", "0"],
        ["--header-timeout", "0s"], ["--idle-timeout", "2d"], ["--max-connections", "0"],
        ["--max-connections", "lots"], ["--nope", "x"], ["--listen"], ["--rules="], ["serve"], ["-l", "x"],
        ["--listen", "1.2.3.4:1", "--listen", "1.2.3.4:2"],
    ])
    func badValuesAreRejectedWithOneLine(arguments: [String]) {
        do {
            let config = try parse(arguments)
            Issue.record("accepted \(arguments): \(config)")
        } catch {
            #expect(!error.description.isEmpty)
            #expect(!error.description.contains("\n"))
        }
    }

    @Test func listenForms() throws {
        #expect(try parse(["--listen", "localhost:80"]).listen == ListenAddress(host: "localhost", port: 80))
        #expect(try parse(["--listen", ":8080"]).listen == ListenAddress(host: "0.0.0.0", port: 8080))
        #expect(try parse(["--listen=[::]:1"]).listen == ListenAddress(host: "::", port: 1))
    }

    @Test func fileURLForms() throws {
        #expect(try parse(["--bucket", "b=file:///srv/data"]).buckets[0].backend == .file(directory: "/srv/data"))
        #expect(try parse(["--bucket", "b=file:data"]).buckets[0].backend == .file(directory: "data"))
    }

    @Test func byteCountsAndDurations() throws {
        #expect(try ConfigurationParser.parseByteCount("5TiB").get() == 5 << 40)
        #expect(try ConfigurationParser.parseByteCount("2G").get() == 2_000_000_000)
        #expect(try ConfigurationParser.parseDuration("2m").get() == .seconds(120))
        #expect(try ConfigurationParser.parseDuration("0.25").get() == .milliseconds(250))
    }

    @Test func optionTableIsComplete() {
        let flags = Set(ConfigurationOption.all.map(\.flag))
        #expect(flags.count == ConfigurationOption.all.count)
        for required in [
            "listen", "bucket", "rules", "jwt-keys", "jwt-issuer", "jwt-audience", "firebase-project",
            "signing-key", "admin-key", "public-url", "cors-origins", "max-object-bytes", "log-format",
        ] {
            #expect(flags.contains(required))
        }
        #expect(ConfigurationOption.all.allSatisfy { $0.environment.hasPrefix("PORTCULLIS_") })
    }
}
