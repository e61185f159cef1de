import Gateway
import PortcullisCore
import Storage
import Upstream

/// One `StorageBackend` per configured bucket, chosen by URL scheme (docs/configuration.md). Failures exit with status 2.
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
                    backends[binding.name] = try EmbeddedBackend.open(
                        directory: directory, bucket: binding.name,
                        options: options)
                } catch {
                    Terminal.fail("--bucket \(binding): cannot open the embedded store: \(error)")
                }
            case .gcs(let bucket):
                let environment = ProcessEnvironment.current()
                var credentials: [UInt8]?
                if environment["STORAGE_EMULATOR_HOST"]?.isEmpty ?? true,
                    let path = environment["GOOGLE_APPLICATION_CREDENTIALS"], !path.isEmpty
                {
                    switch Terminal.readFile(path, limit: 1 << 20) {
                    case .success(let bytes): credentials = bytes
                    case .failure(let failure):
                        Terminal.fail("--bucket \(binding): GOOGLE_APPLICATION_CREDENTIALS \(path): \(failure.reason)")
                    }
                }
                do {
                    let configuration = try GCSBackendConfiguration.fromEnvironment(
                        environment, bucket: bucket,
                        credentialsJSON: credentials)
                    backends[binding.name] = try GCSBackend(configuration: configuration, client: client)
                } catch {
                    Terminal.fail("--bucket \(binding): \(error)")
                }
            case .s3(let bucket):
                do {
                    let configuration = try S3BackendConfiguration.fromEnvironment(
                        ProcessEnvironment.current(),
                        bucket: bucket)
                    backends[binding.name] = S3Backend(configuration: configuration, client: client)
                } catch {
                    Terminal.fail("--bucket \(binding): \(error)")
                }
            }
        }
        return backends
    }

    /// The bucket root (`--bucket-root`) and the buckets created there before; failures exit with status 2.
    static func bucketRoot(config: GatewayConfiguration, logger: Logger) async
        -> ((any BucketProvisioning)?, [ProvisionedBucket])
    {
        guard let directory = config.bucketRoot else { return (nil, []) }
        let options = EmbeddedOptions(
            stagingIdleExpirySeconds: Int64(config.uploadIdleTimeout.components.seconds), logger: logger)
        do {
            let root = try EmbeddedBucketRoot(directory: directory, options: options)
            let existing = try await root.existingBuckets()
            for bucket in existing
            where config.buckets.contains(where: { $0.name.utf8.elementsEqual(bucket.name.utf8) }) {
                Terminal.fail("--bucket-root \(directory): bucket \(bucket.name) is also configured with --bucket")
            }
            return (root, existing)
        } catch {
            Terminal.fail("--bucket-root file:\(directory): cannot open the embedded store: \(error)")
        }
    }
}
