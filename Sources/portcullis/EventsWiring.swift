import Events
import Gateway
import PortcullisCore
import Storage
import Upstream

/// Builds change-event delivery for `serve` from the configuration (docs/events.md): one dispatcher per embedded
/// directory's outbox (buckets sharing a directory share it) and an in-memory queue for gs:// and s3://
/// buckets. Nil when no webhook is configured: then nothing is recorded at all.
enum EventsWiring {
    static func make(
        config: GatewayConfiguration, secret: [UInt8]?, backends: [String: any StorageBackend],
        client: UpstreamClient, registry: MetricsRegistry, logger: Logger, traces: any TraceRoots
    ) -> EventDelivery? {
        guard !config.eventWebhooks.isEmpty else { return nil }
        if secret == nil {
            logger.warning(
                "no --events-secret: change events are sent unsigned; receivers cannot tell them from forgeries")
        }
        var outboxes: [any EventLedger] = []
        var seen = Set<ObjectIdentifier>()
        var upstreamBuckets: [String] = []
        for binding in config.buckets {
            guard let backend = backends[binding.name] else { continue }
            if let outbox = backend as? any ChangeOutbox {
                let ledger = outbox.eventLedger
                if seen.insert(ObjectIdentifier(ledger as AnyObject)).inserted { outboxes.append(ledger) }
            } else {
                upstreamBuckets.append(binding.name)
            }
        }
        if !upstreamBuckets.isEmpty {
            logger.info(
                "change events of upstream buckets are delivered while this process runs, from memory; the upstream's own notifications are the complete record",
                [("buckets", .string(upstreamBuckets.joined(separator: ",")))])
        }
        logger.info(
            "change events enabled", [("webhooks", .string(config.eventWebhooks.map(\.label).joined(separator: ",")))])
        return EventDelivery(
            webhooks: config.eventWebhooks, outboxes: outboxes,
            transport: UpstreamWebhookTransport(client: client),
            signer: secret.map { EventSigner(secret: $0) }, registry: registry, logger: logger, traces: traces)
    }
}
