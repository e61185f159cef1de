import Events
import HTTPServer
import PortcullisCore

/// Turns `portcullis serve` arguments and the process environment into a validated `GatewayConfiguration`.
///
/// Pure: the caller passes the arguments (without the `serve` word) and the environment, so every rule is
/// testable without a process. Flags win over env vars option by option; for the repeatable `--bucket`, any
/// flag occurrence replaces the whole `PORTCULLIS_BUCKETS` list. An empty env var counts as unset.
/// Accepted flag forms: `--flag VALUE` and `--flag=VALUE`.
public enum ConfigurationParser {
    public static func parse(arguments: [String], environment: [String: String]) throws(ConfigurationError)
        -> GatewayConfiguration
    {
        let byFlag = Dictionary(uniqueKeysWithValues: ConfigurationOption.all.map { ($0.flag, $0) })
        var flagValues: [String: [String]] = [:]
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--"), argument.count > 2 else { throw .unexpectedArgument(argument) }
            let body = argument.dropFirst(2)
            let name: String
            let value: String
            if let equals = body.firstIndex(of: "=") {
                name = String(body[..<equals])
                value = String(body[body.index(after: equals)...])
            } else {
                name = String(body)
                guard let option = byFlag[name] else { throw .unknownFlag(argument) }
                if option.isSwitch {
                    guard flagValues[name] == nil else { throw .conflict("--\(name) given more than once") }
                    flagValues[name] = ["true"]
                    continue
                }
                guard index < arguments.count else { throw .missingValue(flag: argument) }
                value = arguments[index]
                index += 1
            }
            guard let option = byFlag[name] else { throw .unknownFlag("--" + name) }
            guard !value.isEmpty else { throw .missingValue(flag: "--" + name) }
            if !option.repeatable, flagValues[name] != nil {
                throw .conflict("--\(name) given more than once")
            }
            flagValues[name, default: []].append(value)
        }

        /// The effective raw value(s) of an option and where they came from.
        func raw(_ option: ConfigurationOption) -> (values: [String], source: ConfigurationError.Source)? {
            if let values = flagValues[option.flag] { return (values, .flag) }
            guard let text = environment[option.environment], !text.isEmpty else { return nil }
            if option.repeatable {
                let parts = text.split(separator: ",", omittingEmptySubsequences: true)
                    .map { String($0).trimmingASCIIWhitespace() }.filter { !$0.isEmpty }
                return (parts, .environment)
            }
            return ([text], .environment)
        }
        func single(_ option: ConfigurationOption) -> (value: String, source: ConfigurationError.Source)? {
            guard let (values, source) = raw(option), let first = values.first else { return nil }
            return (first, source)
        }
        func convert<T>(_ option: ConfigurationOption, _ transform: (String) -> Result<T, ReasonText>)
            throws(ConfigurationError) -> T?
        {
            guard let (value, source) = single(option) else { return nil }
            switch transform(value) {
            case .success(let converted): return converted
            case .failure(let reason):
                throw .invalidValue(option: option, value: value, reason: reason.text, source: source)
            }
        }

        var config = GatewayConfiguration()
        if let listen = try convert(.listen, parseListen) { config.listen = listen }
        if let (values, source) = raw(.bucket) {
            var buckets: [BucketBinding] = []
            for value in values {
                switch parseBucket(value) {
                case .success(let binding): buckets.append(binding)
                case .failure(let reason):
                    throw .invalidValue(option: .bucket, value: value, reason: reason.text, source: source)
                }
            }
            if buckets.isEmpty {
                throw .invalidValue(
                    option: .bucket, value: "", reason: "at least one bucket is required", source: source)
            }
            config.buckets = buckets
        }
        config.rulesFile = single(.rules)?.value
        config.jwtKeys = try convert(.jwtKeys, parseKeySource)
        config.jwtIssuer = single(.jwtIssuer)?.value
        config.jwtAudience = single(.jwtAudience)?.value
        config.firebaseProject = try convert(.firebaseProject, parseProjectID)
        config.jwtHMACSecretFile = single(.jwtHMACSecret)?.value
        if let leeway = try convert(.jwtLeeway, { parseInteger($0, in: 0...3600) }) { config.jwtLeewaySeconds = leeway }
        config.signingKeyFile = single(.signingKey)?.value
        config.adminKeyFile = single(.adminKey)?.value
        config.publicURL = try convert(.publicURL, parsePublicURL)
        if let origins = try convert(.corsOrigins, parseCORSOrigins) { config.corsOrigins = origins }
        if let limit = try convert(.maxObjectBytes, parseByteCount) { config.maxObjectBytes = limit }
        if let format = try convert(
            .logFormat,
            { text in
                LogFormat(rawValue: text.lowercased()).map { .success($0) } ?? .failure("expected json or text")
            })
        {
            config.logFormat = format
        }
        if let level = try convert(.logLevel, parseLogLevel) { config.logLevel = level }
        if let value = try convert(.drainTimeout, { parseDuration($0, allowZero: true) }) {
            config.drainTimeout = value
        }
        if let value = try convert(.uploadIdleTimeout, { parseDuration($0) }) { config.uploadIdleTimeout = value }
        if let value = try convert(.headerTimeout, { parseDuration($0) }) { config.headerTimeout = value }
        if let value = try convert(.idleTimeout, { parseDuration($0) }) { config.idleTimeout = value }
        if let value = try convert(.maxConnections, { parseInteger($0, in: 1...1_000_000) }) {
            config.maxConnections = value
        }
        if let value = try convert(.upstreamTimeout, { parseDuration($0) }) { config.upstreamTimeout = value }
        if let value = try convert(.devTrustEmulatorOwner, parseSwitch) { config.devTrustEmulatorOwner = value }
        if let value = try convert(.console, parseOnOff) { config.console = value }
        config.consoleListen = try convert(.consoleListen, parseListen)
        config.bucketRoot = try convert(.bucketRoot, parseBucketRoot)
        if let (values, source) = raw(.eventsWebhook) {
            for value in values {
                switch Webhook.parse(value) {
                case .success(let webhook):
                    guard !config.eventWebhooks.contains(where: { $0.url.utf8.elementsEqual(webhook.url.utf8) }) else {
                        throw .invalidValue(
                            option: .eventsWebhook, value: value, reason: "webhook configured twice",
                            source: source)
                    }
                    config.eventWebhooks.append(webhook)
                case .failure(let problem):
                    throw .invalidValue(option: .eventsWebhook, value: value, reason: problem.reason, source: source)
                }
            }
        }
        config.eventsSecretFile = single(.eventsSecret)?.value
        if let value = try convert(.eventLoop, parseEventLoop) { config.eventLoop = value }
        config.serviceAccountsFile = single(.serviceAccounts)?.value
        if let (values, source) = raw(.signedURLAccounts) {
            for value in values where !value.isEmpty {
                guard let spec = SignedURLAccountSpec.parse(value) else {
                    throw .invalidValue(
                        option: .signedURLAccounts, value: value,
                        reason: "expected EMAIL, FILE.json, EMAIL=FILE or hmac:ACCESS_ID=FILE", source: source)
                }
                config.signedURLAccounts.append(spec)
            }
        }
        config.tlsCertFile = single(.tlsCert)?.value
        config.tlsKeyFile = single(.tlsKey)?.value
        config.otlpEndpoint = try convert(.otlpEndpoint, parseOTLPEndpoint)
        config.traceSampleRatio = try convert(.traceSampleRatio, parseRatio)
        config.s3Listen = try convert(.s3Listen, parseListen)
        config.s3Domain = single(.s3Domain)?.value
        config.s3KeysFile = single(.s3Keys)?.value
        if let region = single(.s3Region)?.value { config.s3Region = region }

        try config.validate()
        return config
    }

    // MARK: - Value parsers (each returns a short reason on failure)

    struct ReasonText: Error, ExpressibleByStringLiteral {
        let text: String
        init(_ text: String) { self.text = text }
        init(stringLiteral text: String) { self.text = text }
    }

    /// `HOST:PORT`, `[IPV6]:PORT`, or `:PORT` (all IPv4 interfaces).
    static func parseListen(_ text: String) -> Result<ListenAddress, ReasonText> {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return .failure("missing ']' after the IPv6 address") }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { return .failure("expected [IPV6]:PORT") }
            portText = rest.dropFirst()
            guard !host.isEmpty, host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }), host.contains(":") else {
                return .failure("not an IPv6 address")
            }
        } else {
            guard let colon = text.lastIndex(of: ":") else { return .failure("expected HOST:PORT") }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            if host.contains(":") { return .failure("put IPv6 addresses in brackets: [::1]:8080") }
            guard host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }) else {
                return .failure("host must be an IP address or a hostname")
            }
        }
        guard let port = Int(portText), (0...65_535).contains(port), portText.allSatisfy(\.isASCIIDigit) else {
            return .failure("port must be a number 0-65535")
        }
        return .success(ListenAddress(host: host.isEmpty ? "0.0.0.0" : String(host), port: port))
    }

    /// `NAME=file:DIR`, `NAME=gs://BUCKET`, `NAME=s3://BUCKET`.
    static func parseBucket(_ text: String) -> Result<BucketBinding, ReasonText> {
        guard let equals = text.firstIndex(of: "=") else { return .failure("expected NAME=URL") }
        let name = String(text[..<equals]).trimmingASCIIWhitespace()
        let url = String(text[text.index(after: equals)...]).trimmingASCIIWhitespace()
        if let problem = BucketBinding.nameProblem(name) { return .failure(ReasonText(problem)) }
        let backend: BackendLocation
        if url.hasPrefix("file:") {
            var directory = String(url.dropFirst(5))
            if directory.hasPrefix("//") { directory = String(directory.dropFirst(2)) }  // file:///srv/data
            guard !directory.isEmpty else { return .failure("file: needs a directory, e.g. file:./data") }
            backend = .file(directory: directory)
        } else if url.hasPrefix("gs://") || url.hasPrefix("s3://") {
            let bucket = String(url.dropFirst(5))
            guard !bucket.isEmpty, !bucket.utf8.contains(UInt8(ascii: "/")), BucketBinding.nameProblem(bucket) == nil
            else {
                return .failure(ReasonText("expected \(url.prefix(5))BUCKET with a plain bucket name"))
            }
            backend = url.hasPrefix("gs") ? .gcs(bucket: bucket) : .s3(bucket: bucket)
        } else {
            return .failure("backend URL must start with file:, gs:// or s3://")
        }
        return .success(BucketBinding(name: name, backend: backend))
    }

    static func parseKeySource(_ text: String) -> Result<String, ReasonText> {
        if text.contains("://"), !(text.hasPrefix("http://") || text.hasPrefix("https://")) {
            return .failure("expected a file path or an http(s) URL")
        }
        return .success(text)
    }

    /// Google Cloud project ids: lower-case letters, digits and hyphens.
    static func parseProjectID(_ text: String) -> Result<String, ReasonText> {
        guard (1...63).contains(text.count),
            text.allSatisfy({ ($0.isASCII && ($0.isLowercase || $0.isNumber)) || $0 == "-" })
        else {
            return .failure("project ids are lower-case letters, digits and '-'")
        }
        return .success(text)
    }

    static func parsePublicURL(_ text: String) -> Result<String, ReasonText> {
        guard text.hasPrefix("http://") || text.hasPrefix("https://") else {
            return .failure("must start with http:// or https://")
        }
        // Checked on bytes: a URL is ASCII, and `?` or `/` with a combining mark after it would be one `Character`.
        guard
            !text.utf8.contains(where: {
                $0 <= 0x20 || $0 >= 0x7F || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#")
            })
        else {
            return .failure("must be a plain base URL of ASCII without spaces, query or fragment")
        }
        var url = text
        while url.hasSuffix("/") { url.removeLast() }
        guard url.count > (url.hasPrefix("https") ? 8 : 7) else { return .failure("missing host") }
        return .success(url)
    }

    static func parseCORSOrigins(_ text: String) -> Result<CORSOrigins, ReasonText> {
        let parts = text.split(separator: ",").map { String($0).trimmingASCIIWhitespace() }.filter { !$0.isEmpty }
        if parts == ["*"] { return .success(.any) }
        guard !parts.isEmpty else { return .failure("expected * or a list of origins") }
        for origin in parts {
            guard origin.hasPrefix("http://") || origin.hasPrefix("https://"), !origin.hasSuffix("/"),
                origin.split(separator: "/").count == 2
            else {
                return .failure(ReasonText("origin \"\(origin)\" is not scheme://host[:port]"))
            }
        }
        return .success(.only(parts))
    }

    static func parseInteger(_ text: String, in range: ClosedRange<Int>) -> Result<Int, ReasonText> {
        guard text.allSatisfy(\.isASCIIDigit), let value = Int(text), range.contains(value) else {
            return .failure(ReasonText("expected a whole number \(range.lowerBound)-\(range.upperBound)"))
        }
        return .success(value)
    }

    /// A byte count with an optional binary (`KiB`..`TiB`) or decimal (`K`/`KB`..`T`/`TB`) suffix.
    static func parseByteCount(_ text: String) -> Result<Int64, ReasonText> {
        let digits = text.prefix(while: \.isASCIIDigit)
        let suffix = text.dropFirst(digits.count).lowercased()
        let multipliers: [String: Int64] = [
            "": 1, "b": 1, "k": 1_000, "kb": 1_000, "m": 1_000_000, "mb": 1_000_000, "g": 1_000_000_000,
            "gb": 1_000_000_000, "t": 1_000_000_000_000, "tb": 1_000_000_000_000,
            "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
        ]
        guard !digits.isEmpty, let number = Int64(digits), let multiplier = multipliers[suffix] else {
            return .failure("expected a byte count such as 1048576, 100MiB or 5TiB")
        }
        let (product, overflow) = number.multipliedReportingOverflow(by: multiplier)
        guard !overflow else { return .failure("too large") }
        guard product > 0 else { return .failure("must be positive") }
        return .success(product)
    }

    /// Seconds (`25`, `2.5`) or a number with `ms`, `s`, `m`, `h`.
    static func parseDuration(_ text: String, allowZero: Bool = false) -> Result<Duration, ReasonText> {
        let number = text.prefix(while: { $0.isASCIIDigit || $0 == "." })
        let unit = text.dropFirst(number.count)
        let scale: Double
        switch unit {
        case "", "s": scale = 1
        case "ms": scale = 0.001
        case "m": scale = 60
        case "h": scale = 3600
        default: return .failure("expected seconds, or a number with ms, s, m or h")
        }
        guard !number.isEmpty, let value = Double(number), value.isFinite else {
            return .failure("expected seconds, or a number with ms, s, m or h")
        }
        let seconds = value * scale
        guard seconds <= 31_536_000 else { return .failure("longer than a year") }
        guard allowZero || seconds > 0 else { return .failure("must be positive") }
        return .success(.milliseconds(Int64((seconds * 1000).rounded())))
    }

    static func parseSwitch(_ text: String) -> Result<Bool, ReasonText> {
        switch text.lowercased() {
        case "1", "true", "yes", "on": .success(true)
        case "0", "false", "no", "off": .success(false)
        default: .failure("expected true or false")
        }
    }

    /// `epoll` or `dispatch`, and only one this platform has.
    static func parseEventLoop(_ text: String) -> Result<EventLoopDriver, ReasonText> {
        guard let driver = EventLoopDriver(rawValue: text.lowercased()) else {
            return .failure(
                ReasonText("expected \(EventLoopDriver.allCases.map(\.rawValue).joined(separator: " or "))"))
        }
        guard driver.isAvailable else {
            return .failure(
                ReasonText("\(driver) does not exist on this platform; use \(EventLoopDriver.platformDefault)"))
        }
        return .success(driver)
    }

    static func parseLogLevel(_ text: String) -> Result<Logger.Level, ReasonText> {
        switch text.lowercased() {
        case "debug": .success(.debug)
        case "info": .success(.info)
        case "warning", "warn": .success(.warning)
        case "error": .success(.error)
        default: .failure("expected debug, info, warning or error")
        }
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}

extension String {
    func trimmingASCIIWhitespace() -> String {
        var view = Substring(self)
        while let first = view.first, first == " " || first == "\t" || first.isNewline { view.removeFirst() }
        while let last = view.last, last == " " || last == "\t" || last.isNewline { view.removeLast() }
        return String(view)
    }
}
