import Gateway
import PortcullisCore
import Storage
import Upstream

/// One `StorageBackend` per configured bucket, chosen by URL scheme (DESIGN §4). Failures exit with status 2.
enum BackendFactory {
    static func make(config: GatewayConfiguration, client: UpstreamClient, logger: Logger)
        -> [String: any StorageBackend]
    {
        var backends: [String: any StorageBackend] = [:]
        for binding in config.buckets {
            switch binding.backend {
            case .file(let directory):
                let options = EmbeddedOptions(
                    stagingIdleExpirySeconds: Int64(config.uploadIdleTimeout.components.seconds), logger: logger)
                do {
                    backends[binding.name] = try EmbeddedBackend.open(directory: directory, bucket: binding.name,
                                                                      options: options)
                } catch {
                    Terminal.fail("--bucket \(binding): cannot open the embedded store: \(error)")
                }
            case .gcs, .s3:
                Terminal.fail("--bucket \(binding): \(binding.backend.kind) backends are not available in this build")
            }
        }
        return backends
    }
}
