import StorageClient

/// `ls`, `rm` and the recursive walk `cp -r`, `rm -r`, `ls -r` and `mirror` share.
extension Commands {
    /// Every object under `folder` (its folder `folder/`, and sub-folders depth first), in listing order.
    /// The walk holds the names only (no metadata), one page of the server's listing at a time per level.
    static func walk(_ folder: StorageReference) async throws -> [StorageReference] {
        let page = try await on(folder.description + "/") { try await folder.listAll() }
        var objects = page.items
        for prefix in page.prefixes { objects += try await walk(prefix) }
        return objects
    }

    /// `object`'s name relative to `folder` (`a/b/c.txt` under `a` → `b/c.txt`).
    static func relativeName(_ object: StorageReference, under folder: StorageReference) -> String {
        guard !folder.fullPath.isEmpty else { return object.fullPath }
        return String(decoding: Array(object.fullPath.utf8.dropFirst(folder.fullPath.utf8.count + 1)), as: UTF8.self)
    }

    static func list(_ storage: Storage, _ arguments: ParsedArguments) async throws {
        let spec = CommandSpec.list
        let url = target(arguments, spec, what: "gs://BUCKET/PREFIX/")
        let ref = reference(storage, url, spec)
        if arguments.has("--recursive") {
            guard !arguments.has("--page-size") else {
                CLIExit.usage("ls: --page-size lists one page of one folder; leave out -r", command: spec)
            }
            for object in try await walk(ref) { print(object.description) }
            return
        }
        let result: StorageListResult
        if let text = arguments.value("--page-size") {
            guard let size = Int(text), (1...1000).contains(size) else {
                CLIExit.usage("ls: --page-size must be 1-1000, not \(text)", command: spec)
            }
            result = try await on(url) { try await ref.list(maxResults: size) }
        } else {
            result = try await on(url) { try await ref.listAll() }
        }
        for prefix in result.prefixes { print("gs://\(prefix.bucket)/\(prefix.fullPath)/") }
        for item in result.items { print("gs://\(item.bucket)/\(item.fullPath)") }
        if let token = result.pageToken { print("# next page token: \(token)") }
    }

    static func remove(_ storage: Storage, _ arguments: ParsedArguments) async throws {
        let spec = CommandSpec.remove
        guard !arguments.operands.isEmpty else { CLIExit.usage("rm needs at least one gs:// URL", command: spec) }
        let references = arguments.operands.map { reference(storage, $0, spec) }
        let recursive = arguments.has("--recursive")
        for ref in references {
            let objects = recursive ? try await walk(ref) : [ref]
            guard !objects.isEmpty else {
                throw TargetedFailure(
                    target: ref.description + "/", error: StorageError(.objectNotFound, "No object", httpStatus: 404))
            }
            for object in objects {
                try await on(object.description) { try await object.delete() }
                print("removed \(object.description)")
            }
        }
    }
}
