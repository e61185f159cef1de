import PortcullisCore
import Storage
import Testing

/// The backend contract suite on the embedded backend: one fresh directory per check.
@Suite struct EmbeddedContractTests {
    @Test(arguments: BackendContract.Check.allCases)
    func contract(_ check: BackendContract.Check) async throws {
        let directory = TemporaryDirectory()
        let backend = try EmbeddedBackend.open(directory: directory.path, bucket: "contract-bucket")
        try await BackendContract(backend: backend, staging: backend, bucket: "contract-bucket").run(check)
    }

    /// Two buckets in one directory are independent namespaces.
    @Test func bucketsShareADirectoryButNotNames() async throws {
        let directory = TemporaryDirectory()
        let a = try EmbeddedBackend.open(directory: directory.path, bucket: "a")
        let b = try EmbeddedBackend.open(directory: directory.path, bucket: "b")
        _ = try await a.write(
            ObjectPath(bucket: "a", name: "same"), body: BufferByteStream([1]),
            attributes: ObjectAttributes(), options: WriteOptions())
        _ = try await b.write(
            ObjectPath(bucket: "b", name: "same"), body: BufferByteStream([2]),
            attributes: ObjectAttributes(), options: WriteOptions())
        #expect(try await readAll(a.read(ObjectPath(bucket: "a", name: "same"), range: nil).body) == [1])
        #expect(try await readAll(b.read(ObjectPath(bucket: "b", name: "same"), range: nil).body) == [2])
        let page = try await a.list(ListRequest(bucket: "a", prefix: "", delimiter: nil, maxResults: 10, cursor: nil))
        #expect(page.items == ["same"])
        await #expect(throws: StorageError.self) {
            _ = try await a.metadata(of: ObjectPath(bucket: "b", name: "same"))
        }
    }
}
