import PortcullisCore
import Synchronization
import Testing

@testable import Gateway

/// The gauges operations alerts rely on: readiness and its changes, and embedded disk space.
@Suite struct OperationsMetricsTests {
    @Test func readinessAnswersAndChangesAreMetrics() async {
        let registry = MetricsRegistry()
        let backendReady = Atomic<Bool>(true)
        let readiness = Readiness(probeInterval: .zero, metrics: registry) {
            backendReady.load(ordering: .relaxed)
        }
        #expect(registry.render().contains("portcullis_ready 0\n"))
        #expect(await readiness.check().ready == false)  // starting: no change from the initial 0
        #expect(registry.render().contains("portcullis_readiness_changes_total 0\n"))

        readiness.markServing()
        #expect(await readiness.check().ready)
        #expect(await readiness.check().ready)  // the same answer again is no change
        var text = registry.render()
        #expect(text.contains("portcullis_ready 1\n"))
        #expect(text.contains("portcullis_readiness_changes_total 1\n"))

        backendReady.store(false, ordering: .relaxed)
        #expect(await readiness.check().ready == false)
        backendReady.store(true, ordering: .relaxed)
        #expect(await readiness.check().ready)
        readiness.markDraining()
        #expect(await readiness.check().ready == false)
        text = registry.render()
        #expect(text.contains("portcullis_ready 0\n"))
        #expect(text.contains("portcullis_readiness_changes_total 4\n"))
        #expect(text.contains("# TYPE portcullis_readiness_changes_total counter\n"))
        #expect(text.contains("# TYPE portcullis_ready gauge\n"))
    }

    @Test func diskSpaceIsReportedPerEmbeddedBucket() throws {
        let registry = MetricsRegistry()
        DiskSpaceMetrics.register(
            in: registry,
            directories: [("a", "/tmp"), ("gone", "/nonexistent/portcullis-\(UInt64.random(in: 0...UInt64.max))")])
        let text = registry.render()
        let space = try #require(DiskSpaceMetrics.space(of: "/tmp"))
        #expect(space.size > 0 && space.available <= space.size)
        #expect(text.contains("# TYPE portcullis_embedded_disk_free_bytes gauge\n"))
        #expect(text.contains(#"portcullis_embedded_disk_size_bytes{bucket="a"} \#(space.size)"#))
        #expect(text.contains(#"portcullis_embedded_disk_free_bytes{bucket="a"} "#))
        // An unreadable directory is left out rather than reported as a full disk.
        #expect(!text.contains(#"bucket="gone""#))
    }

    @Test func noEmbeddedBucketsNoDiskFamilies() {
        let registry = MetricsRegistry()
        DiskSpaceMetrics.register(in: registry, directories: [])
        #expect(!registry.render().contains("portcullis_embedded_disk"))
    }

    @Test func labelledCallbackGaugeEscapesAndSamplesEachScrape() {
        let registry = MetricsRegistry()
        let calls = Atomic<Int>(0)
        registry.gauge("test_sampled", help: "A test gauge.", labels: ["name"]) {
            let n = calls.add(1, ordering: .relaxed).newValue
            return [(["plain"], Double(n)), (["quote\"back\\slash"], 0.5)]
        }
        #expect(registry.render().contains("test_sampled{name=\"plain\"} 1\n"))
        let text = registry.render()
        #expect(text.contains("test_sampled{name=\"plain\"} 2\n"))
        #expect(text.contains(#"test_sampled{name="quote\"back\\slash"} 0.5"#))
    }
}
