import HTTPServer
import PortcullisCore
import Storage
import Testing

@testable import Gateway

/// Resumable-upload and CORS details found by driving the server the way the SDKs do.
@Suite struct ConformanceResumableTests {
    static let base = "/v0/b/\(V0Harness.bucket)/o"

    func start(_ h: V0Harness, _ name: String, size: Int, origin: String? = nil) async throws -> TestResponse {
        var headers = [
            ("X-Goog-Upload-Protocol", "resumable"), ("X-Goog-Upload-Command", "start"),
            ("X-Goog-Upload-Header-Content-Length", String(size)),
        ]
        if let origin { headers.append(("Origin", origin)) }
        return try await h.send(
            "POST", Self.base + "?name=\(PercentEncoding.uriComponent.encode(name))", headers: headers)
    }

    /// A chunk sent at a wrong offset that would also overrun the declared size is reported as an offset
    /// mismatch with the persisted size (so JS/iOS query and resume), and nothing is appended.
    @Test func wrongOffsetBeyondDeclaredSizeReportsPersistedSize() async throws {
        let h = try V0Harness()
        let granule = V0API.chunkGranularity
        let data = randomBytes(2 * granule)
        let r = try await start(h, "o/ffset.bin", size: data.count)
        let url = String(try #require(r["X-Goog-Upload-URL"]).dropFirst("http://gateway.test".count))
        let first = try await h.send(
            "POST", url,
            headers: [
                ("X-Goog-Upload-Command", "upload"),
                ("X-Goog-Upload-Offset", "0"),
            ], body: Array(data[..<granule]))
        #expect(first.status == 200)
        let bad = try await h.send(
            "POST", url,
            headers: [
                ("X-Goog-Upload-Command", "upload"),
                ("X-Goog-Upload-Offset", String(granule + 10)),
            ],
            body: Array(data[granule...]))
        #expect(bad.status == 400)
        #expect(bad["X-Goog-Upload-Size-Received"] == String(granule))
        #expect(bad["X-Goog-Upload-Status"] == "active")
        let fin = try await h.send(
            "POST", url,
            headers: [
                ("X-Goog-Upload-Command", "upload, finalize"),
                ("X-Goog-Upload-Offset", String(granule)),
            ],
            body: Array(data[granule...]))
        #expect(fin.status == 200, "\(fin.text)")
        #expect(fin.json?["size"] == .string(String(data.count)))
    }

    /// Every header the emulator exposes is exposed to browsers, `x-gupload-uploadid` included.
    @Test func exposedHeadersCoverTheEmulatorList() async throws {
        let h = try V0Harness()
        let r = try await start(h, "cors.bin", size: 1, origin: "http://app.test")
        let exposed = Set(
            (r["Access-Control-Expose-Headers"] ?? "").split(separator: ",")
                .map { $0.trimmingSpaces().lowercased() })
        for name in [
            "content-type", "x-firebase-storage-version", "x-goog-upload-size-received", "x-goog-upload-url",
            "x-goog-upload-command", "x-gupload-uploadid", "x-goog-upload-header-content-length",
            "x-goog-upload-header-content-type", "x-goog-upload-protocol", "x-goog-upload-status",
            "x-goog-upload-chunk-granularity", "x-goog-upload-control-url",
        ] {
            #expect(exposed.contains(name), "\(name) not exposed")
        }
    }
}
