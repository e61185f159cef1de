import Gateway
import PortcullisCore
import Upstream

/// Builds the process's `Tracer` from `--otlp-endpoint` and `--trace-sample-ratio` (docs/configuration.md,
/// "Tracing"): without an endpoint, `Tracer.off` (trace ids and propagation only); with one, a started
/// `SpanExporter` and a parent-based sampler at the ratio (1 when unset).
enum TracingWiring {
    static func make(config: GatewayConfiguration, client: UpstreamClient, registry: MetricsRegistry, logger: Logger)
        -> (tracer: Tracer, exporter: SpanExporter?)
    {
        guard let endpoint = config.otlpEndpoint else { return (.off, nil) }
        let exporter = SpanExporter(
            settings: SpanExporter.Settings(endpoint: endpoint),
            encoding: OTLPEncoding(
                serviceName: "portcullis", serviceVersion: PortcullisVersion.current,
                instanceID: RequestIdentity.generate()),
            client: client, metrics: registry, logger: logger)
        exporter.start()
        let ratio = config.traceSampleRatio ?? 1
        logger.info(
            "tracing: exporting spans over OTLP/HTTP",
            [("endpoint", .string(exporter.settings.tracesURL)), ("sample_ratio", .double(ratio))])
        return (Tracer(sampler: TraceSampler(ratio: ratio), recorder: exporter), exporter)
    }
}
