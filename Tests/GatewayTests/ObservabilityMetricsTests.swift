import PortcullisCore
import Testing

@testable import Gateway

@Suite struct ObservabilityMetricsTests {
    @Test func httpMetricsRenderByRouteTemplate() {
        let registry = MetricsRegistry()
        let metrics = HTTPMetrics(registry: registry)
        metrics.record(
            route: "/v0/b/{bucket}/o/{object}", method: HTTPMethodLabel("GET"), status: 200, bytesIn: 0,
            bytesOut: 1000, durationNanos: 3_000_000)
        metrics.record(
            route: "/v0/b/{bucket}/o/{object}", method: HTTPMethodLabel("GET"), status: 200, bytesIn: 0,
            bytesOut: 24, durationNanos: 20_000_000)
        metrics.record(
            route: "/v0/b/{bucket}/o", method: HTTPMethodLabel("BREW"), status: 499, bytesIn: 7,
            bytesOut: 0, durationNanos: 1)
        metrics.inflight.increment()
        let text = registry.render()
        #expect(
            text.contains(
                #"portcullis_http_requests_total{route="/v0/b/{bucket}/o/{object}",method="GET",status="200"} 2"#))
        #expect(
            text.contains(#"portcullis_http_requests_total{route="/v0/b/{bucket}/o",method="OTHER",status="499"} 1"#))
        #expect(text.contains(#"portcullis_http_response_bytes_total{route="/v0/b/{bucket}/o/{object}"} 1024"#))
        #expect(text.contains(#"portcullis_http_request_bytes_total{route="/v0/b/{bucket}/o"} 7"#))
        #expect(
            text.contains(
                #"portcullis_http_request_duration_seconds_bucket{route="/v0/b/{bucket}/o/{object}",le="0.005"} 1"#))
        #expect(
            text.contains(
                #"portcullis_http_request_duration_seconds_bucket{route="/v0/b/{bucket}/o/{object}",le="0.025"} 2"#))
        #expect(text.contains(#"portcullis_http_request_duration_seconds_count{route="/v0/b/{bucket}/o/{object}"} 2"#))
        #expect(text.contains("portcullis_http_inflight_requests 1"))
        #expect(text.contains("# TYPE portcullis_http_request_duration_seconds histogram"))
    }

    @Test func processAndConnectionGaugesSampleAtScrape() throws {
        let registry = MetricsRegistry()
        ProcessMetrics.register(in: registry)
        HTTPMetrics(registry: registry).trackOpenConnections { 3 }
        let text = registry.render()
        #expect(text.contains("portcullis_open_connections 3"))
        let rss = try #require(ProcessMetrics.residentMemoryBytes())
        #expect(rss > 1 << 20)
        let fds = try #require(ProcessMetrics.openFileDescriptors())
        #expect(fds >= 3)
        for name in [
            "process_resident_memory_bytes", "process_open_fds", "process_start_time_seconds",
            "portcullis_uptime_seconds",
        ] {
            #expect(text.contains("# TYPE \(name) gauge\n\(name) "))
        }
    }
}
