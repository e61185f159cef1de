import PortcullisCore
import Storage
import Testing
import Upstream

@testable import Service

/// A request binds its bucket to its trace (`Bucket.bound(to:)`); the traced copy looks up only the capabilities
/// the configured bucket found, and must end up with exactly those.
@Suite struct BucketBindingTests {
    @Test func aBoundBucketHasTheCapabilitiesItsBackendAdopts() throws {
        let client = UpstreamClient()
        let gcs = try GCSBackend(configuration: .init(bucket: "b", endpoint: "http://127.0.0.1:9"), client: client)
        let s3 = S3Backend(
            configuration: .init(bucket: "b", endpoint: "http://127.0.0.1:9", accessKeyID: "a", secretAccessKey: "s"),
            client: client)
        let trace = Trace(context: TraceIDs.newTrace(sampled: false), recorder: nil)
        let backends: [any StorageBackend] = [gcs, s3]
        for backend in backends {
            let configured = StorageService.Bucket(name: "b", backend: backend)
            let bound = configured.bound(to: trace)
            let discovered = StorageService.Bucket(name: "b", backend: bound.backend)
            let capabilities: [(StorageService.Bucket) -> Bool] = [
                { $0.staging != nil }, { $0.outbox != nil }, { $0.readsAreLocal }, { $0.inPlace != nil },
                { $0.renames != nil }, { $0.traceable != nil }, { $0.versioned != nil },
            ]
            for has in capabilities {
                #expect(has(bound) == has(discovered) && has(bound) == has(configured))
            }
            #expect(bound.traceable != nil && bound.staging != nil)
        }
        #expect(StorageService.Bucket(name: "b", backend: gcs).bound(to: trace).versioned != nil)
    }
}
