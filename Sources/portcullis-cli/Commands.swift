import Foundation
import StorageClient

#if canImport(Glibc)
import Glibc
#endif

/// The CLI's server commands; each reads its checked arguments and prints to stdout. Usage errors exit 2,
/// operation failures throw (exit 1 in `PortcullisCLI`).
enum Commands {
    static func run(_ spec: CommandSpec, _ arguments: ParsedArguments, _ storage: Storage) async throws {
        switch spec.name {
        case CommandSpec.list.name: try await list(storage, arguments)
        case CommandSpec.stat.name: try await stat(storage, arguments)
        case CommandSpec.copy.name: try await copy(storage, arguments)
        case CommandSpec.remove.name: try await remove(storage, arguments)
        case CommandSpec.url.name: try await url(storage, arguments)
        case CommandSpec.setMetadata.name: try await setMetadata(storage, arguments)
        default: CLIExit.usage("unknown command \(spec.name)")
        }
    }

    /// The single `gs://` operand of a command (exit 2 otherwise).
    static func target(_ arguments: ParsedArguments, _ spec: CommandSpec, what: String = "gs://BUCKET/OBJECT") -> String
    {
        guard arguments.operands.count == 1 else {
            CLIExit.usage("\(spec.name) needs one \(what)", command: spec)
        }
        return arguments.operands[0]
    }

    static func reference(_ storage: Storage, _ url: String, _ spec: CommandSpec) -> StorageReference {
        guard url.hasPrefix("gs://") || url.hasPrefix("http://") || url.hasPrefix("https://"),
            let reference = try? storage.reference(forURL: url)
        else {
            CLIExit.usage("\(spec.name): expected a gs://BUCKET/PATH URL, got \(url)", command: spec)
        }
        return reference
    }

    static func list(_ storage: Storage, _ arguments: ParsedArguments) async throws {
        let spec = CommandSpec.list
        let ref = reference(storage, target(arguments, spec, what: "gs://BUCKET/PREFIX/"), spec)
        let result: StorageListResult
        if let text = arguments.value("--page-size") {
            guard let size = Int(text), (1...1000).contains(size) else {
                CLIExit.usage("ls: --page-size must be 1-1000, not \(text)", command: spec)
            }
            result = try await ref.list(maxResults: size)
        } else {
            result = try await ref.listAll()
        }
        for prefix in result.prefixes { print("gs://\(prefix.bucket)/\(prefix.fullPath)/") }
        for item in result.items { print("gs://\(item.bucket)/\(item.fullPath)") }
        if let token = result.pageToken { print("# next page token: \(token)") }
    }

    static func stat(_ storage: Storage, _ arguments: ParsedArguments) async throws {
        let spec = CommandSpec.stat
        let ref = reference(storage, target(arguments, spec), spec)
        if arguments.has("--json") {
            print(try await ref.getMetadataJSON().encoded())
            return
        }
        let metadata = try await ref.getMetadata()
        var fields: [(String, String)] = [
            ("bucket", metadata.bucket), ("name", metadata.path), ("size", String(metadata.size)),
            ("generation", String(metadata.generation)),
            ("metageneration", String(metadata.metageneration)),
        ]
        if let v = metadata.contentType { fields.append(("contentType", v)) }
        if let v = metadata.contentEncoding { fields.append(("contentEncoding", v)) }
        if let v = metadata.md5Hash { fields.append(("md5Hash", v)) }
        if let v = metadata.cacheControl { fields.append(("cacheControl", v)) }
        if let v = metadata.updated { fields.append(("updated", v.rfc3339Milliseconds)) }
        let custom = metadata.customMetadata.sorted { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }
        for (key, value) in custom { fields.append(("metadata.\(key)", value)) }
        for (key, value) in fields { print("\(key): \(value)") }
    }

    static func copy(_ storage: Storage, _ arguments: ParsedArguments) async throws {
        let spec = CommandSpec.copy
        guard arguments.operands.count == 2 else { CLIExit.usage("cp needs SRC and DST", command: spec) }
        let (source, destination) = (arguments.operands[0], arguments.operands[1])
        let recursive = arguments.has("--recursive")
        let progress = ProgressLine()
        if source.hasPrefix("gs://") {
            guard !recursive else {
                CLIExit.usage("cp --recursive uploads a local directory; download objects one at a time", command: spec)
            }
            guard !destination.hasPrefix("gs://") else {
                CLIExit.usage("cp copies between a local path and gs://", command: spec)
            }
            let ref = reference(storage, source, spec)
            let file = downloadTarget(destination, object: ref)
            let task = ref.write(toFile: file)
            task.observe(.progress) { progress.show($0.progress.completedUnitCount, $0.progress.totalUnitCount) }
            _ = try await task.waitForCompletion()
            progress.finish()
            let size = (try? FileManager.default.attributesOfItem(atPath: file.path))?[.size] as? NSNumber
            print("\(file.path) \(size?.int64Value ?? 0) bytes")
            return
        }
        guard destination.hasPrefix("gs://") else {
            CLIExit.usage("cp copies between a local path and gs://", command: spec)
        }
        let root = reference(storage, destination, spec)
        if recursive {
            let uploader = BatchUploader(maxConcurrentUploads: 4)
            let base = URL(fileURLWithPath: source)
            guard let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: [.isRegularFileKey])
            else {
                CLIExit.failure("cannot read directory \(source)")
            }
            var count = 0
            for case let file as URL in walker
            where (try? file.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true {
                let relative = String(file.standardizedFileURL.path.dropFirst(base.standardizedFileURL.path.count + 1))
                try uploader.add(file: file, to: root.child(relative))
                count += 1
            }
            uploader.onProgress { progress.show($0, $1) }
            let results = try await uploader.start()
            progress.finish()
            print("uploaded \(results.count) of \(count) files")
            return
        }
        let task = root.putFile(from: URL(fileURLWithPath: source))
        task.observe(.progress) { progress.show($0.progress.completedUnitCount, $0.progress.totalUnitCount) }
        let metadata = try await task.result()
        progress.finish()
        print("gs://\(metadata.bucket)/\(metadata.path) \(metadata.size) bytes md5=\(metadata.md5Hash ?? "-")")
    }

    /// The local file a download writes: `destination`, or the object's last name segment inside it when
    /// `destination` is a directory (as `cp` does).
    static func downloadTarget(_ destination: String, object: StorageReference) -> URL {
        var isDirectory: ObjCBool = false
        if destination.hasSuffix("/")
            || (FileManager.default.fileExists(atPath: destination, isDirectory: &isDirectory)
                && isDirectory.boolValue)
        {
            return URL(fileURLWithPath: destination).appendingPathComponent(object.name)
        }
        return URL(fileURLWithPath: destination)
    }

    static func remove(_ storage: Storage, _ arguments: ParsedArguments) async throws {
        let spec = CommandSpec.remove
        guard !arguments.operands.isEmpty else { CLIExit.usage("rm needs at least one gs:// URL", command: spec) }
        let references = arguments.operands.map { reference(storage, $0, spec) }
        for ref in references { try await ref.delete() }
    }

    static func url(_ storage: Storage, _ arguments: ParsedArguments) async throws {
        let spec = CommandSpec.url
        let ref = reference(storage, target(arguments, spec), spec)
        if arguments.has("--signed") {
            var expires = 3600
            if let text = arguments.value("--expires") {
                guard let seconds = Int(text), seconds > 0 else {
                    CLIExit.usage("url: --expires must be a positive number of seconds, not \(text)", command: spec)
                }
                expires = seconds
            }
            print(try await ref.signedURL(expiresIn: expires).url.absoluteString)
        } else {
            guard !arguments.has("--expires") else { CLIExit.usage("url: --expires goes with --signed", command: spec) }
            print(try await ref.downloadURL().absoluteString)
        }
    }

    static func setMetadata(_ storage: Storage, _ arguments: ParsedArguments) async throws {
        let spec = CommandSpec.setMetadata
        let ref = reference(storage, target(arguments, spec), spec)
        var set: [(String, String)] = []
        for pair in arguments.all("--meta") {
            guard let eq = pair.firstIndex(of: "="), eq != pair.startIndex else {
                CLIExit.usage("set-meta: --meta takes KEY=VALUE, not \(pair)", command: spec)
            }
            set.append((String(pair[..<eq]), String(pair[pair.index(after: eq)...])))
        }
        var metadata = try await ref.getMetadata()
        if let contentType = arguments.value("--content-type") { metadata.contentType = contentType }
        if let cacheControl = arguments.value("--cache-control") { metadata.cacheControl = cacheControl }
        for (key, value) in set { metadata.customMetadata[key] = value }
        for key in arguments.all("--remove-meta") { metadata.customMetadata[key] = nil }
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
