import Foundation
import StorageClient
#if canImport(Glibc)
import Glibc
#endif

/// The CLI's subcommands; each parses its own arguments and prints to stdout.
enum Commands {
    static func reference(_ storage: Storage, _ url: String) throws -> StorageReference {
        guard url.hasPrefix("gs://") || url.hasPrefix("http") else {
            PortcullisCLI.fail("expected a gs://BUCKET/PATH URL, got \(url)", code: 2)
        }
        return try storage.reference(forURL: url)
    }

    static func list(_ storage: Storage, _ args: inout [String]) async throws {
        var pageSize: Int?
        var target: String?
        while !args.isEmpty {
            let arg = args.removeFirst()
            if arg == "--page-size" { pageSize = Int(PortcullisCLI.take(&args, arg)) } else { target = arg }
        }
        guard let target else { PortcullisCLI.fail("ls needs gs://BUCKET/PREFIX", code: 2) }
        let ref = try reference(storage, target)
        let result = if let pageSize { try await ref.list(maxResults: pageSize) } else { try await ref.listAll() }
        for prefix in result.prefixes { print("gs://\(prefix.bucket)/\(prefix.fullPath)/") }
        for item in result.items { print("gs://\(item.bucket)/\(item.fullPath)") }
        if let token = result.pageToken { print("# next page token: \(token)") }
    }

    static func stat(_ storage: Storage, _ args: inout [String]) async throws {
        guard let target = args.first else { PortcullisCLI.fail("stat needs gs://BUCKET/OBJECT", code: 2) }
        let metadata = try await reference(storage, target).getMetadata()
        var fields: [(String, String)] = [("bucket", metadata.bucket), ("name", metadata.path), ("size", String(metadata.size)),
                                           ("generation", String(metadata.generation)),
                                           ("metageneration", String(metadata.metageneration))]
        if let v = metadata.contentType { fields.append(("contentType", v)) }
        if let v = metadata.md5Hash { fields.append(("md5Hash", v)) }
        if let v = metadata.cacheControl { fields.append(("cacheControl", v)) }
        if let v = metadata.updated { fields.append(("updated", v.rfc3339Milliseconds)) }
        for (key, value) in metadata.customMetadata.sorted(by: { $0.key < $1.key }) { fields.append(("metadata.\(key)", value)) }
        for (key, value) in fields { print("\(key): \(value)") }
    }

    static func copy(_ storage: Storage, _ args: inout [String]) async throws {
        var recursive = false
        var paths: [String] = []
        for arg in args { if arg == "--recursive" || arg == "-r" { recursive = true } else { paths.append(arg) } }
        guard paths.count == 2 else { PortcullisCLI.fail("cp needs SRC and DST", code: 2) }
        let (source, destination) = (paths[0], paths[1])
        let progress = ProgressLine()
        if source.hasPrefix("gs://") {
            let task = try reference(storage, source).write(toFile: URL(fileURLWithPath: destination))
            task.observe(.progress) { progress.show($0.progress.completedUnitCount, $0.progress.totalUnitCount) }
            _ = try await task.waitForCompletion()
        } else if recursive {
            let root = try reference(storage, destination)
            let uploader = BatchUploader(maxConcurrentUploads: 4)
            let base = URL(fileURLWithPath: source)
            guard let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: [.isRegularFileKey]) else {
                PortcullisCLI.fail("cannot read directory \(source)", code: 1)
            }
            var count = 0
            for case let file as URL in walker where (try? file.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true {
                let relative = String(file.standardizedFileURL.path.dropFirst(base.standardizedFileURL.path.count + 1))
                try uploader.add(file: file, to: root.child(relative))
                count += 1
            }
            uploader.onProgress { progress.show($0, $1) }
            let results = try await uploader.start()
            progress.finish()
            print("uploaded \(results.count) of \(count) files")
            return
        } else {
            let task = try reference(storage, destination).putFile(from: URL(fileURLWithPath: source))
            task.observe(.progress) { progress.show($0.progress.completedUnitCount, $0.progress.totalUnitCount) }
            let metadata = try await task.result()
            progress.finish()
            print("gs://\(metadata.bucket)/\(metadata.path) \(metadata.size) bytes md5=\(metadata.md5Hash ?? "-")")
            return
        }
        progress.finish()
    }

    static func remove(_ storage: Storage, _ args: inout [String]) async throws {
        guard !args.isEmpty else { PortcullisCLI.fail("rm needs at least one gs:// URL", code: 2) }
        for target in args { try await reference(storage, target).delete() }
    }

    static func url(_ storage: Storage, _ args: inout [String]) async throws {
        var signed = false
        var expires = 3600
        var target: String?
        while !args.isEmpty {
            let arg = args.removeFirst()
            switch arg {
            case "--signed": signed = true
            case "--expires": expires = Int(PortcullisCLI.take(&args, arg)) ?? 3600
            default: target = arg
            }
        }
        guard let target else { PortcullisCLI.fail("url needs gs://BUCKET/OBJECT", code: 2) }
        let ref = try reference(storage, target)
        if signed { print(try await ref.signedURL(expiresIn: expires).url.absoluteString) }
        else { print(try await ref.downloadURL().absoluteString) }
    }

    static func setMetadata(_ storage: Storage, _ args: inout [String]) async throws {
        var target: String?
        var contentType: String?, cacheControl: String?
        var set: [String: String] = [:]
        var removed: [String] = []
        while !args.isEmpty {
            let arg = args.removeFirst()
            switch arg {
            case "--content-type": contentType = PortcullisCLI.take(&args, arg)
            case "--cache-control": cacheControl = PortcullisCLI.take(&args, arg)
            case "--meta":
                let pair = PortcullisCLI.take(&args, arg)
                guard let eq = pair.firstIndex(of: "=") else { PortcullisCLI.fail("--meta takes KEY=VALUE", code: 2) }
                set[String(pair[..<eq])] = String(pair[pair.index(after: eq)...])
            case "--remove-meta": removed.append(PortcullisCLI.take(&args, arg))
            default: target = arg
            }
        }
        guard let target else { PortcullisCLI.fail("set-meta needs gs://BUCKET/OBJECT", code: 2) }
        let ref = try reference(storage, target)
        var metadata = try await ref.getMetadata()
        if let contentType { metadata.contentType = contentType }
        if let cacheControl { metadata.cacheControl = cacheControl }
        for (key, value) in set { metadata.customMetadata[key] = value }
        for key in removed { metadata.customMetadata[key] = nil }
        let updated = try await ref.updateMetadata(metadata)
        print("metageneration \(updated.metageneration)")
    }
}

/// A one-line progress display, drawn only when stdout is a terminal.
final class ProgressLine: @unchecked Sendable {
    private let lock = NSLock()
    private let enabled = isatty(1) == 1

    func show(_ done: Int64, _ total: Int64) {
        guard enabled else { return }
        lock.withLock {
            let percent = total > 0 ? Int(Double(done) / Double(total) * 100) : 0
            let width = 30, filled = total > 0 ? Int(Double(width) * Double(done) / Double(total)) : 0
            let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: max(0, width - filled))
            FileHandle.standardOutput.write(Data("\r[\(bar)] \(percent)% \(done)/\(max(total, 0)) bytes".utf8))
        }
    }

    func finish() { if enabled { print("") } }
}
