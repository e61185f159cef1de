public import PortcullisCore

#if canImport(Glibc)
import Glibc
#endif

/// Free and total space of the file systems holding embedded (`file:`) buckets, sampled at scrape time with
/// `statvfs`, so an alert can fire before an embedded store fills its disk (a full disk fails every write).
///
/// Series are labelled by bucket name — configuration, never request input. A directory that cannot be read is
/// left out of the scrape rather than reported as empty.
public enum DiskSpaceMetrics {
    public static func register(in registry: MetricsRegistry, directories: [(bucket: String, path: String)]) {
        guard !directories.isEmpty else { return }
        registry.gauge(
            "portcullis_embedded_disk_free_bytes",
            help: "Bytes available to the gateway on the file system of an embedded bucket.", labels: ["bucket"]
        ) {
            directories.compactMap { entry in
                space(of: entry.path).map { (labels: [entry.bucket], value: Double($0.available)) }
            }
        }
        registry.gauge(
            "portcullis_embedded_disk_size_bytes",
            help: "Size in bytes of the file system of an embedded bucket.", labels: ["bucket"]
        ) {
            directories.compactMap { entry in
                space(of: entry.path).map { (labels: [entry.bucket], value: Double($0.size)) }
            }
        }
    }

    /// Bytes available to an unprivileged writer and the file system's size, or nil when `statvfs` fails.
    public static func space(of path: String) -> (available: UInt64, size: UInt64)? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        let unit = UInt64(info.f_frsize)
        return (UInt64(info.f_bavail) * unit, UInt64(info.f_blocks) * unit)
    }
}
