import Foundation
import PortcullisCore
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
        case CommandSpec.mirror.name: try await Mirror.run(storage, arguments)
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

    static func stat(_ storage: Storage, _ arguments: ParsedArguments) async throws {
        let spec = CommandSpec.stat
        let ref = reference(storage, target(arguments, spec), spec)
        if arguments.has("--json") {
            print(try await on(ref.description) { try await ref.getMetadataJSON() }.encoded())
            return
        }
        let metadata = try await on(ref.description) { try await ref.getMetadata() }
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
            print(try await on(ref.description) { try await ref.signedURL(expiresIn: expires) }.url.absoluteString)
        } else {
            guard !arguments.has("--expires") else { CLIExit.usage("url: --expires goes with --signed", command: spec) }
            print(try await on(ref.description) { try await ref.downloadURL() }.absoluteString)
        }
    }

    static func setMetadata(_ storage: Storage, _ arguments: ParsedArguments) async throws {
        let spec = CommandSpec.setMetadata
        let ref = reference(storage, target(arguments, spec), spec)
        var set: [(String, String)] = []
        for pair in arguments.all("--meta") {
            guard let (key, value) = pair.bytesCut(at: UInt8(ascii: "=")), !key.isEmpty else {
                CLIExit.usage("set-meta: --meta takes KEY=VALUE, not \(pair)", command: spec)
            }
            set.append((key, value))
        }
        var metadata = try await on(ref.description) { try await ref.getMetadata() }
        if let contentType = arguments.value("--content-type") { metadata.contentType = contentType }
        if let cacheControl = arguments.value("--cache-control") { metadata.cacheControl = cacheControl }
        for (key, value) in set { metadata.customMetadata[key] = value }
        for key in arguments.all("--remove-meta") { metadata.customMetadata[key] = nil }
        let updated = try await on(ref.description) { try await ref.updateMetadata(metadata) }
        print("metageneration \(updated.metageneration)")
    }
}
