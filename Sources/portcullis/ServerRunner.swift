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
        let httpMetrics = HTTPMetrics(registry: registry)
        let upstreamDeadline =
            Double(config.upstreamTimeout.components.seconds)
            + Double(config.upstreamTimeout.components.attoseconds) / 1e18
        let upstream = UpstreamClient(
            configuration: UpstreamConfiguration(requestDeadline: upstreamDeadline),
            metrics: registry, logger: logger)

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
            client: upstream, registry: registry, logger: logger)
        let service = StorageService(
            configuration: ServiceConfiguration(maxObjectBytes: config.maxObjectBytes),
            backends: backends, sealer: sealer, rules: rules.store, metrics: registry, logger: logger, events: events)
        let v0 = V0API(service: service, configuration: V0Configuration(publicURL: config.publicURL), logger: logger)
        let jsonAPI = JSONAPI(
            service: service, configuration: JSONAPIConfiguration(publicURL: config.publicURL),
            logger: logger)
        let keysAttempted = StartupGate()
        let authentication = AuthenticationFactory.make(
            config: config, secrets: secrets, client: upstream,
            registry: registry, logger: logger,
            keysAttempted: keysAttempted)

        // The rules explain endpoint is an admin API of its own; the console (a browser app over the public
        // APIs) is optional.
        var surfaces: [any APISurface] = [v0, jsonAPI, RulesExplainSurface(service: service)]
        if config.console { surfaces.append(ConsoleSurface()) }

        let readiness = Readiness { await service.isReady() }
        let accessLog = AccessLog(format: config.logFormat)
        let responder = GatewayResponder(
            ops: OpsEndpoints(readiness: readiness, registry: registry), surfaces: surfaces,
            authentication: authentication,
            metrics: httpMetrics, accessLog: accessLog,
            cors: CORSPolicy(origins: corsList(config.corsOrigins)))

        let server = HTTPServer(
            configuration: HTTPServerConfiguration(
                host: config.listen.host, port: config.listen.port,
                timeouts: HTTPServerTimeouts(headerRead: config.headerTimeout, idle: config.idleTimeout),
                maxConnections: config.maxConnections, eventLoop: config.eventLoop),
            responder: responder, logger: logger)
        ProcessMetrics.registerBuildInfo(
            in: registry, version: PortcullisVersion.current,
            eventLoop: server.eventLoop.rawValue)
        httpMetrics.trackOpenConnections { server.openConnections }
        registry.gauge("portcullis_stream_buffered_bytes", help: "Response bytes buffered in user space.") {
            Double(server.bufferedResponseBytes)
        }

        let signals = SignalHandling(logger: logger)
        signals.onReload = { rules.reload() }
        signals.onShutdown = {
            readiness.markDraining()
            logger.info("draining", [("deadline_seconds", .double(Double(config.drainTimeout.components.seconds)))])
            Task {
                await server.drain(deadline: config.drainTimeout)
                accessLog.flush()
                logger.info("drained; exiting")
                exit(0)
            }
        }
        signals.install()

        let port: Int
        do {
            port = try server.start()
        } catch {
            if case .invalidAddress = error { Terminal.fail("--listen \(config.listen): \(error.description)") }
            Terminal.fail("cannot listen on \(config.listen): \(error.description)", code: 1)
        }
        // Delivery runs beside serving from now on; it resumes whatever the outboxes kept from earlier runs.
        events?.start()
        // Ready once listening and the first JWT key load has finished (tokens would be refused before).
        Task {
            await keysAttempted.wait()
            readiness.markServing()
        }
        let bound = ListenAddress(host: config.listen.host, port: port)
        let shownHost =
            ["0.0.0.0", "::"].contains(config.listen.host)
            ? "127.0.0.1"
            : bound.description
                .dropLast(String(port).count + 1)
        let url = "http://\(shownHost):\(port)"
        logger.info(
            "portcullis ready",
            [
                ("address", .string(bound.description)), ("url", .string(url)),
                ("buckets", .string(config.buckets.map(\.description).joined(separator: ","))),
                ("version", .string(PortcullisVersion.current)), ("event_loop", .string(server.eventLoop.rawValue)),
            ])
        if let first = config.buckets.first {
            logger.info("try: curl '\(url)/v0/b/\(first.name)/o'")
        }
        if config.console {
            logger.info("console: \(url)\(ConsoleSurface.pageTemplate)")
        }
        await SignalHandling.waitForever()
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

    private static func corsList(_ origins: CORSOrigins) -> [String] {
        switch origins {
        case .any: ["*"]
        case .only(let list): list
        }
    }
}
