import PortcullisCore
import Storage
import Synchronization

/// The buckets created through the API, beside the configured ones: the root that keeps them and, for each, the
/// service's view of its backend and its resource facts. Changed only by the bucket calls; read by every
/// request that names a bucket the configuration does not.
final class CreatedBuckets: Sendable {
    let root: any BucketProvisioning
    private let table: Mutex<[ExactString: (bucket: StorageService.Bucket, info: ProvisionedBucket)]>

    init(root: any BucketProvisioning, existing: [ProvisionedBucket]) {
        self.root = root
        var table: [ExactString: (bucket: StorageService.Bucket, info: ProvisionedBucket)] = [:]
        for info in existing {
            table[ExactString(info.name)] = (StorageService.Bucket(name: info.name, backend: info.backend), info)
        }
        self.table = Mutex(table)
    }

    var names: [ExactString] { table.withLock { Array($0.keys) } }

    func bucket(_ name: ExactString) -> (bucket: StorageService.Bucket, info: ProvisionedBucket)? {
        table.withLock { $0[name] }
    }

    func store(_ info: ProvisionedBucket) {
        let entry = (StorageService.Bucket(name: info.name, backend: info.backend), info)
        table.withLock { $0[ExactString(info.name)] = entry }
    }

    func remove(_ name: String) { _ = table.withLock { $0.removeValue(forKey: ExactString(name)) } }
}
