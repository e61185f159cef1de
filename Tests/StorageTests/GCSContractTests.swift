import Foundation
import PortcullisCore
import Testing
import Upstream

@testable import Storage

/// Environment for the GCS tests: `PORTCULLIS_TEST_GCS_ENDPOINT` (fake-gcs-server started by
/// `scripts/emulators.sh`). Unset → the tests are skipped with that reason.
enum GCSTestEnvironment {
    static let endpoint = ProcessInfo.processInfo.environment["PORTCULLIS_TEST_GCS_ENDPOINT"]
    static let client = UpstreamClient()

    /// A fresh, empty bucket on the emulator and a backend serving it.
    static func freshBackend() async throws -> (GCSBackend, String) {
        let endpoint = try #require(endpoint)
        let bucket = "gcs-\(UUID().uuidString.lowercased().prefix(18))"
        let created = try await client.fetch(
            UpstreamRequest(
                method: "POST", url: "\(endpoint)/storage/v1/b?project=test",
                headers: [("Content-Type", "application/json")], body: .bytes(Array("{\"name\":\"\(bucket)\"}".utf8))),
            maxBytes: 1 << 20)
        #expect(created.status == 200)
        let backend = try GCSBackend(
            configuration: GCSBackendConfiguration(bucket: bucket, endpoint: endpoint),
            client: client)
        return (backend, bucket)
    }
}

@Suite(
    .enabled(
        if: GCSTestEnvironment.endpoint != nil,
        "PORTCULLIS_TEST_GCS_ENDPOINT is not set (run scripts/emulators.sh start)"))
struct GCSContractTests {
    /// Checks that differ on GCS, by name:
    /// - fake-gcs-server does not bump `metageneration` on PATCH and stores `""` for a key patched with null
    ///   (real GCS does both right), so the metadata-merge and metageneration-precondition checks fail there, and
    ///   replacing a custom key by a canonically equivalent spelling leaves the old key behind as `""` (the object
    ///   then holds two equivalent keys, which the gateway refuses to read);
    /// - GCS assigns the generation when it commits, so `beforeCommit` cannot see the final generation number.
    static let knownDifferences: Set<BackendContract.Check> = [
        .updateMetadataMerge, .preconditions, .beforeCommitRejects, .metadataKeysAreBytes,
    ]

    /// Every other check, the resumable-staging ones included (`GCSBackend` is its own `ResumableStaging`).
    @Test(arguments: BackendContract.Check.allCases.filter { !knownDifferences.contains($0) })
    func contract(_ check: BackendContract.Check) async throws {
        let (backend, bucket) = try await GCSTestEnvironment.freshBackend()
        try await BackendContract(
            backend: backend, staging: backend, bucket: bucket,
            paginationScale: .upstream
        ).run(check)
    }

    @Test(arguments: Array(knownDifferences))
    func contractKnownDifferences(_ check: BackendContract.Check) async throws {
        let (backend, bucket) = try await GCSTestEnvironment.freshBackend()
        await withKnownIssue("emulator quirk or GCS limitation, see knownDifferences", isIntermittent: true) {
            try await BackendContract(
                backend: backend, staging: backend, bucket: bucket,
                paginationScale: .upstream
            ).run(check)
        }
    }

    @Test func configurationFromEnvironment() throws {
        let emulator = try GCSBackendConfiguration.fromEnvironment(
            ["STORAGE_EMULATOR_HOST": "127.0.0.1:4443"],
            bucket: "b", credentialsJSON: nil)
        #expect(emulator.endpoint == "http://127.0.0.1:4443")
        let json =
            #"{"type":"service_account","client_email":"a@b.iam","private_key":"PEM","token_uri":"https://t/token"}"#
        let account = try GCSBackendConfiguration.fromEnvironment([:], bucket: "b", credentialsJSON: Array(json.utf8))
        #expect(account.endpoint == "https://storage.googleapis.com")
        guard case .serviceAccount(let email, _, let uri) = account.credentials else {
            Issue.record("no account"); return
        }
        #expect(email == "a@b.iam" && uri == "https://t/token")
        #expect(throws: StorageError.self) {
            try GCSBackendConfiguration.fromEnvironment([:], bucket: "b", credentialsJSON: nil)
        }
    }

    @Test func rangeIsPassedThroughAndStreamed() async throws {
        let (backend, bucket) = try await GCSTestEnvironment.freshBackend()
        let body = testBytes(3 << 20, seed: 3)
        let path = try ObjectPath(bucket: bucket, name: "big.bin")
        let written = try await backend.write(
            path, body: BufferByteStream(body), attributes: ObjectAttributes(),
            options: WriteOptions())
        #expect(written.size == Int64(body.count))
        let read = try await backend.read(path, range: .fromTo(first: 1_000_000, last: 2_999_999))
        #expect(read.range == ResolvedRange(offset: 1_000_000, length: 2_000_000))
        #expect(try await readAll(read.body) == Array(body[1_000_000..<3_000_000]))
    }
}
