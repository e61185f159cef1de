public import PortcullisCore

#if canImport(Glibc)
import Glibc
#endif

/// Process gauges sampled at scrape time only: resident memory, open file descriptors, uptime.
///
/// Reads `/proc/self/statm` and `/proc/self/fd` (Linux); where they do not exist the gauges read 0.
public enum ProcessMetrics {
    public static func register(
        in registry: MetricsRegistry, startedAt: UInt64 = MonotonicClock.nanoseconds(),
        startTime: Timestamp = .now()
    ) {
        registry.gauge("process_resident_memory_bytes", help: "Resident set size in bytes.") {
            Double(residentMemoryBytes() ?? 0)
        }
        registry.gauge("process_open_fds", help: "Open file descriptors.") { Double(openFileDescriptors() ?? 0) }
        let start = Double(startTime.millisecondsSinceEpoch) / 1000
        registry.gauge("process_start_time_seconds", help: "Start time of the process since the Unix epoch.") { start }
        registry.gauge("portcullis_uptime_seconds", help: "Seconds since the process started.") {
            Double(MonotonicClock.nanoseconds() &- startedAt) / 1e9
        }
    }

    /// `portcullis_build_info{version,event_loop} 1`: what this process runs, as labels (the Prometheus
    /// convention for build information), so dashboards can split figures by version and event-loop driver.
    public static func registerBuildInfo(in registry: MetricsRegistry, version: String, eventLoop: String) {
        registry.gauge(
            "portcullis_build_info", help: "Build and runtime facts of this process, as labels; always 1.",
            labels: ["version", "event_loop"]
        ).labels(version, eventLoop).set(1)
    }

    /// RSS from the second field of `/proc/self/statm` (pages) times the page size.
    public static func residentMemoryBytes() -> Int64? {
        let fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { return nil }
        let fields = buffer[..<n].split(separator: UInt8(ascii: " "))
        guard fields.count >= 2, let pages = Int64(String(decoding: fields[1], as: UTF8.self)) else { return nil }
        return pages * Int64(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Entries of `/proc/self/fd`, minus the descriptor used to list it.
    public static func openFileDescriptors() -> Int? {
        guard let names = DirectoryEntries.names(in: "/proc/self/fd") else { return nil }
        return max(0, names.count - 1)
    }
}
