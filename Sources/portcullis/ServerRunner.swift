import Auth
import Crypto
import Dispatch
import Events
import Gateway
import HTTPServer
import PortcullisCore
import Service
import Storage
import Upstream

#if canImport(Glibc)
import Glibc
#endif

/// Builds the running gateway from a validated configuration, starts it, and waits for signals.
///
/// Order matters: everything that can fail on bad input (key files, rules, backends, the bind) happens before
/// readiness turns 200, and each such failure exits with a one-line message.
enum ServerRunner {
    static func run(config: GatewayConfiguration, secrets: ServeSecrets, rulesSource: String?, logger: Logger) async
        -> Never
    {
        raiseDescriptorLimit(wanted: config.maxConnections, logger: logger)
        let registry = MetricsRegistry()
        ProcessMetrics.register(in: registry)
        DiskSpaceMetrics.register(
            in: registry,
            directories: config.buckets.compactMap { binding in
                guard case .file(let directory) = binding.backend else { return nil }
                return (binding.name, directory)
            })
        let httpMetrics = HTTPMetrics(registry: registry)
        let upstreamDeadline =
            Double(config.upstreamTimeout.components.seconds)
            + Double(config.upstreamTimeout.components.attoseconds) / 1e18
        let upstream = UpstreamClient(
            configuration: UpstreamConfiguration(requestDeadline: upstreamDeadline),
            metrics: registry, logger: logger)
        let (tracer, spanExporter) = TracingWiring.make(
            config: config, client: upstream, registry: registry, logger: logger)

        let backends = BackendFactory.make(config: config, client: upstream, logger: logger)
        if secrets.signingKeyIsRandom {
            logger.warning(
                "no --signing-key: using a random key for this process; cursors, upload URLs and signed URLs will not work across instances or restarts"
            )
        }
        if let adminKey = secrets.adminKey, adminKey.count < 16 {
            logger.warning("the admin key is shorter than 16 bytes; use a long random value")
        }
        let rules = RulesLoader(config: config, logger: logger)
        rules.loadAtStart(source: rulesSource)

        let sealer = CapabilitySealer(keys: secrets.signingKeys.map { SigningKey(id: $0.id, secret: $0.secret) })
        let events = EventsWiring.make(
            config: config, secret: secrets.eventsSecret, backends: backends,
            client: upstream, registry: registry, logger: logger, traces: tracer)
        let (bucketRoot, provisioned) = await BackendFactory.bucketRoot(config: config, logger: logger)
        let service = StorageService(
            configuration: ServiceConfiguration(maxObjectBytes: config.maxObjectBytes),
            backends: backends, sealer: sealer, rules: rules.store, metrics: registry, logger: logger, events: events,
            bucketRoot: bucketRoot, provisioned: provisioned)
        let v0 = V0API(service: service, configuration: V0Configuration(publicURL: config.publicURL), logger: logger)
        let jsonAPI = JSONAPI(
            service: service, configuration: JSONAPIConfiguration(publicURL: config.publicURL),
            logger: logger)
        let keysAttempted = StartupGate()
        let authentication = AuthenticationFactory.make(
            config: config, secrets: secrets, client: upstream,
            registry: registry, logger: logger,
            keysAttempted: keysAttempted, traces: tracer)

        // The rules explain endpoint is an admin API of its own; the console (a browser app over the public
        // APIs) is optional, and with --console-listen it is served on its own listener only (below).
        let batch = BatchSurface()
        var surfaces: [any APISurface] = [v0, jsonAPI, batch, RulesExplainSurface(service: service)]
        if config.console, config.consoleListen == nil { surfaces.append(ConsoleSurface()) }
        let serviceAccounts = ServiceAccountsLoader(config: config, logger: logger)
        let requestAuthentication = serviceAccountAuthentication(
            serviceAccounts, config: config, secrets: secrets, service: service, registry: registry, client: upstream,
            logger: logger, next: authentication, surfaces: &surfaces, traces: tracer)

        let readiness = Readiness(metrics: registry) { await service.isReady() }
        let accessLog = AccessLog(format: config.logFormat)
        let ops = OpsEndpoints(readiness: readiness, registry: registry)
        let responder = compile { () throws(RouteTableError) in
            try GatewayResponder(
                ops: ops, surfaces: surfaces, authentication: requestAuthentication, metrics: httpMetrics,
                accessLog: accessLog, cors: CORSPolicy(origins: corsList(config)), tracer: tracer)
        }

        // Each part of a batch goes through the whole pipeline, as a request of its own.
        batch.connect(responder)
        let tls = TLSIdentity.load(config: config)
        let server = HTTPServer(
            configuration: serverConfiguration(config, listen: config.listen, tls: tls), responder: responder,
            logger: logger)
        let port = start(server, flag: "listen", address: config.listen)
        // Event bodies link to the objects as the JSON API would (the port is known only now).
        events?.setLinkBase(
            config.publicURL ?? shownURL(ListenAddress(host: config.listen.host, port: port), secure: tls != nil))
        // The console's listener knows the API's port only once the main one is bound (it may be port 0).
        let console: (server: HTTPServer, port: Int)? = config.consoleListen.map { consoleListen in
            let consoleResponder = compile { () throws(RouteTableError) in
                try GatewayResponder(
                    ops: ops,
                    surfaces: [
                        ConsoleSurface(
                            api: .separate(publicURL: config.publicURL, port: port, secure: tls != nil))
                    ],
                    authentication: requestAuthentication, metrics: httpMetrics, accessLog: accessLog,
                    cors: CORSPolicy(origins: corsList(config)), tracer: tracer)
            }
            let second = HTTPServer(
                configuration: serverConfiguration(config, listen: consoleListen, tls: tls),
                responder: consoleResponder,
                logger: logger)
            return (second, start(second, flag: "console-listen", address: consoleListen))
        }
        let consoleServer = console?.server
        let s3Keys = S3KeysLoader(config: config, logger: logger)
        let s3Server = startS3(
            config: config, service: service, keys: s3Keys.store, sessions: authentication, ops: ops,
            metrics: httpMetrics, accessLog: accessLog, tls: tls, tracer: tracer, logger: logger)

        ProcessMetrics.registerBuildInfo(
            in: registry, version: PortcullisVersion.current,
            eventLoop: server.eventLoop.rawValue)
        httpMetrics.trackOpenConnections {
            server.openConnections + (consoleServer?.openConnections ?? 0) + (s3Server?.openConnections ?? 0)
        }
        registry.gauge("portcullis_stream_buffered_bytes", help: "Response bytes buffered in user space.") {
            Double(
                server.bufferedResponseBytes + (consoleServer?.bufferedResponseBytes ?? 0)
                    + (s3Server?.bufferedResponseBytes ?? 0))
        }

        let signals = SignalHandling(logger: logger)
        signals.onReload = {
            rules.reload()
            serviceAccounts?.reload()
            s3Keys.reload()
            if let tls { TLSIdentity.reload(tls, config: config, logger: logger) }
        }
        signals.onShutdown = {
            readiness.markDraining()
            logger.info("draining", [("deadline_seconds", .double(Double(config.drainTimeout.components.seconds)))])
            Task {
                async let consoleDrained: Void? = consoleServer?.drain(deadline: config.drainTimeout)
                async let s3Drained: Void? = s3Server?.drain(deadline: config.drainTimeout)
                await server.drain(deadline: config.drainTimeout)
                _ = await consoleDrained
                _ = await s3Drained
                accessLog.flush()
                await spanExporter?.shutdown()
                logger.info("drained; exiting")
                exit(0)
            }
        }
        signals.install()

        // Delivery runs beside serving from now on; it resumes whatever the outboxes kept from earlier runs.
        events?.start()
        // Ready once listening and the first JWT key load has finished (tokens would be refused before).
        Task {
            await keysAttempted.wait()
            readiness.markServing()
        }
        let bound = ListenAddress(host: config.listen.host, port: port)
        let url = shownURL(bound, secure: tls != nil)
        logger.info(
            "portcullis ready",
            [
                ("address", .string(bound.description)), ("url", .string(url)),
                ("buckets", .string(config.buckets.map(\.description).joined(separator: ","))),
                ("version", .string(PortcullisVersion.current)), ("event_loop", .string(server.eventLoop.rawValue)),
            ])
        if let first = config.buckets.first {
            for line in StartupHint.lines(
                url: url, bucket: first.name, rules: rules.store.current, adminKeyFile: config.adminKeyFile,
                trustsEmulatorOwner: config.devTrustEmulatorOwner)
            {
                logger.info(line)
            }
        }
        if let consoleListen = config.consoleListen, let console {
            let consoleURL = shownURL(ListenAddress(host: consoleListen.host, port: console.port), secure: tls != nil)
            logger.info("console: \(consoleURL)\(ConsoleSurface.pageTemplate)")
        } else if config.console {
            logger.info("console: \(url)\(ConsoleSurface.pageTemplate)")
        }
        await SignalHandling.waitForever()
    }

    /// The S3 API on its own listener (`--s3-listen`), nil without one. It authenticates each request itself
    /// (SigV4), so its pipeline's bearer-token step is a pass-through; session tokens go to `sessions`.
    private static func startS3(
        config: GatewayConfiguration, service: StorageService, keys: S3AccessKeyStore,
        sessions: any RequestAuthenticating, ops: OpsEndpoints, metrics: HTTPMetrics, accessLog: AccessLog,
        tls: TLSServerContext?, tracer: Tracer, logger: Logger
    ) -> HTTPServer? {
        guard let address = config.s3Listen else { return nil }
        let surface = S3Surface(
            service: service, keys: keys, sessions: sessions,
            configuration: S3Configuration(domain: config.s3Domain, region: config.s3Region), logger: logger)
        let responder = compile { () throws(RouteTableError) in
            try GatewayResponder(
                ops: ops, surfaces: [surface], authentication: SelfAuthenticatingSurface(), metrics: metrics,
                accessLog: accessLog, cors: CORSPolicy(origins: corsList(config)), tracer: tracer)
        }
        let s3 = HTTPServer(
            configuration: serverConfiguration(config, listen: address, tls: tls), responder: responder, logger: logger)
        let port = start(s3, flag: "s3-listen", address: address)
        logger.info(
            "s3 api: \(shownURL(ListenAddress(host: address.host, port: port), secure: tls != nil))",
            [("keys", .int(Int64(keys.count)))])
        return s3
    }

    /// The token endpoint (always served: without `--service-accounts` no account exists and every assertion is
    /// `invalid_grant`), the XML API surface (signed URLs only with `--signed-url-accounts`), and, with accounts, their
    /// credentials checked ahead of `next`. Access tokens are sealed with the signing keys, so every instance
    /// sharing them accepts them.
    private static func serviceAccountAuthentication(
        _ loader: ServiceAccountsLoader?, config: GatewayConfiguration, secrets: ServeSecrets, service: StorageService,
        registry: MetricsRegistry, client: UpstreamClient, logger: Logger, next: any RequestAuthenticating,
        surfaces: inout [any APISurface], traces: any TraceRoots
    ) -> any RequestAuthenticating {
        var audiences = ["https://storage.googleapis.com/", "https://storage.googleapis.com"]
        if let publicURL = config.publicURL { audiences += [publicURL, publicURL + "/"] }
        let authority = ServiceAccountAuthority(
            registry: loader?.registry ?? ServiceAccountRegistry(),
            keys: secrets.signingKeys.map { AccessTokenKey(id: $0.id, secret: $0.secret) },
            selfSignedAudiences: audiences, leewaySeconds: config.jwtLeewaySeconds)
        surfaces.append(OAuthTokenSurface(authority: authority, publicURL: config.publicURL, metrics: registry))
        // The XML API: multipart uploads always, signed URLs when `--signed-url-accounts` trusts a signer.
        let trust = SignedURLSigners.load(
            config, registry: loader?.registry, client: client, logger: logger, traces: traces)
        surfaces.append(
            XMLAPISurface(
                service: service, trust: trust, publicURL: config.publicURL, metrics: registry, logger: logger))
        guard loader != nil else { return next }
        return ServiceAccountAuthentication(authority: authority, next: next, metrics: registry)
    }

    /// The HTTP server settings for one listener; both listeners share the connection limits and timeouts.
    private static func serverConfiguration(
        _ config: GatewayConfiguration, listen: ListenAddress, tls: TLSServerContext?
    ) -> HTTPServerConfiguration {
        HTTPServerConfiguration(
            host: listen.host, port: listen.port,
            timeouts: HTTPServerTimeouts(headerRead: config.headerTimeout, idle: config.idleTimeout),
            maxConnections: config.maxConnections, eventLoop: config.eventLoop, tls: tls)
    }

    /// Binds and starts `server` on `address` (given as `--flag`), exiting with a one-line message on failure;
    /// returns the bound port.
    /// The responder, or the start ends with why its route tables do not compile (a defect of the build, so
    /// exit 1, not a usage error).
    private static func compile(_ make: () throws(RouteTableError) -> GatewayResponder) -> GatewayResponder {
        do { return try make() } catch { Terminal.fail("the route tables do not compile: \(error)", code: 1) }
    }

    private static func start(_ server: HTTPServer, flag: String, address: ListenAddress) -> Int {
        do {
            return try server.start()
        } catch {
            if case .invalidAddress = error { Terminal.fail("--\(flag) \(address): \(error.description)") }
            Terminal.fail("cannot listen on \(address): \(error.description)", code: 1)
        }
    }

    /// A URL a person on this machine can open for a bound address (a wildcard address shown as loopback).
    private static func shownURL(_ bound: ListenAddress, secure: Bool) -> String {
        let host =
            ["0.0.0.0", "::"].contains(bound.host)
            ? "127.0.0.1"
            : bound.description
                .dropLast(String(bound.port).count + 1)
        return "\(secure ? "https" : "http")://\(host):\(bound.port)"
    }

    /// Raises the soft open-file limit to the hard limit (as Go's runtime does): each connection is a
    /// descriptor, and the usual soft limit of 1024 is below the default `--max-connections`.
    private static func raiseDescriptorLimit(wanted: Int, logger: Logger) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        if limit.rlim_cur < rlim_t(Int.max), Int(limit.rlim_cur) < wanted + 64 {
            logger.warning(
                "open-file limit is below --max-connections; extra connections will wait for descriptors",
                [("limit", .int(Int64(limit.rlim_cur))), ("max_connections", .int(Int64(wanted)))])
        }
    }

    /// `--cors-origins`, plus the console's own origin when it has a listener of its own on a named host and a
    /// fixed port (`http://HOST:PORT`, `https://` with TLS; any other origin the console is reached by must be
    /// listed).
    private static func corsList(_ config: GatewayConfiguration) -> [String] {
        switch config.corsOrigins {
        case .any: return ["*"]
        case .only(let list):
            guard let console = config.consoleListen, console.port != 0, !["0.0.0.0", "::"].contains(console.host)
            else { return list }
            return list + ["\(config.tlsCertFile == nil ? "http" : "https")://\(console.description)"]
        }
    }
}
