import Foundation
import StorageClient

#if canImport(Glibc)
import Glibc
#endif

/// `cp`: uploads, downloads, their recursive forms and `-` for stdin/stdout.
extension Commands {
    static func copy(_ storage: Storage, _ arguments: ParsedArguments) async throws {
        let spec = CommandSpec.copy
        guard arguments.operands.count == 2 else { CLIExit.usage("cp needs SRC and DST", command: spec) }
        let (source, destination) = (arguments.operands[0], arguments.operands[1])
        let recursive = arguments.has("--recursive")
        guard source.hasPrefix("gs://") != destination.hasPrefix("gs://") else {
            CLIExit.usage(
                "cp copies between a local path and gs:// (between buckets: portcullis-cli mirror)", command: spec)
        }
        if source.hasPrefix("gs://") {
            let ref = reference(storage, source, spec)
            if recursive {
                guard destination != "-" else { CLIExit.usage("cp -r cannot write a folder to stdout", command: spec) }
                try await downloadTree(ref, into: destination)
            } else if destination == "-" {
                try await downloadToStdout(ref)
            } else {
                let file = downloadTarget(destination, object: ref)
                let size = try await download(ref, to: file, progress: ProgressLine())
                print("\(file.path) \(size) bytes")
            }
            return
        }
        let root = reference(storage, destination, spec)
        let headers = UploadHeaders.parse(arguments.all("--header"), spec: spec)
        if recursive {
            guard source != "-" else { CLIExit.usage("cp -r uploads a directory, not stdin", command: spec) }
            try await uploadTree(source, to: root, headers: headers)
            return
        }
        if source == "-" {
            let spool = try spoolStandardInput()
            defer { try? FileManager.default.removeItem(at: spool) }
            try await upload(spool, to: root, metadata: headers.metadata(forName: root.fullPath))
        } else {
            try await upload(URL(fileURLWithPath: source), to: root, metadata: headers.metadata(forName: source))
        }
    }

    /// Uploads one file and prints `gs://… N bytes md5=…`.
    static func upload(_ file: URL, to ref: StorageReference, metadata: StorageMetadata) async throws {
        let progress = ProgressLine()
        let task = ref.putFile(from: file, metadata: metadata)
        task.observe(.progress) { progress.show($0.progress.completedUnitCount, $0.progress.totalUnitCount) }
        let stored = try await on(ref.description) { try await task.result() }
        progress.finish()
        print("gs://\(stored.bucket)/\(stored.path) \(stored.size) bytes md5=\(stored.md5Hash ?? "-")")
    }

    /// Every regular file under `directory`, uploaded under `root` by its relative path, one line per file.
    static func uploadTree(_ directory: String, to root: StorageReference, headers: UploadHeaders) async throws {
        let base = URL(fileURLWithPath: directory).standardizedFileURL
        guard let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: [.isRegularFileKey])
        else {
            CLIExit.failure("cannot read directory \(directory)")
        }
        var files: [(URL, String)] = []
        for case let file as URL in walker
        where (try? file.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true {
            files.append((file, String(file.standardizedFileURL.path.dropFirst(base.path.count + 1))))
        }
        guard !files.isEmpty else { CLIExit.failure("no files under \(directory)") }
        for (file, relative) in files {
            try await upload(file, to: root.child(relative), metadata: headers.metadata(forName: relative))
        }
    }

    /// Every object under `folder`, written under `directory` by its name relative to the folder.
    static func downloadTree(_ folder: StorageReference, into directory: String) async throws {
        let objects = try await walk(folder)
        guard !objects.isEmpty else {
            throw TargetedFailure(
                target: folder.description + "/", error: StorageError(.objectNotFound, "No object", httpStatus: 404))
        }
        let base = URL(fileURLWithPath: directory)
        for object in objects {
            let relative = relativeName(object, under: folder)
            guard isSafeRelativePath(relative) else {
                CLIExit.failure(
                    "refusing to write \(object.description) outside \(directory): its name has . or .. parts")
            }
            let file = base.appendingPathComponent(relative)
            try FileManager.default.createDirectory(
                at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            let size = try await download(object, to: file, progress: ProgressLine())
            print("\(file.path) \(size) bytes")
        }
    }

    /// An object name is written below the target directory only when none of its segments is empty, `.` or
    /// `..` (an object named `../../etc/x` must not escape it). Segments are cut at every `/` byte, as the file
    /// system cuts them: `../\u{301}x` split by `Character` is one segment (`/` and the mark are one), yet it
    /// names `\u{301}x` in the target's parent.
    static func isSafeRelativePath(_ name: String) -> Bool {
        let segments = name.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        return !segments.contains { $0.isEmpty || $0.elementsEqual(".".utf8) || $0.elementsEqual("..".utf8) }
    }

    /// Downloads `ref` to `file` (resumable, with a progress line on a terminal); returns the size written.
    static func download(_ ref: StorageReference, to file: URL, progress: ProgressLine) async throws -> Int64 {
        let task = ref.write(toFile: file)
        task.observe(.progress) { progress.show($0.progress.completedUnitCount, $0.progress.totalUnitCount) }
        _ = try await on(ref.description) { try await task.waitForCompletion() }
        progress.finish()
        let size = (try? FileManager.default.attributesOfItem(atPath: file.path))?[.size] as? NSNumber
        return size?.int64Value ?? 0
    }

    /// Downloads into a private temporary file, then copies it to stdout in 1 MiB reads, so nothing but the
    /// object's bytes reaches stdout and memory stays bounded.
    static func downloadToStdout(_ ref: StorageReference) async throws {
        let spool = temporaryFile()
        defer { try? FileManager.default.removeItem(at: spool) }
        _ = try await download(ref, to: spool, progress: ProgressLine(enabled: false))
        let input = try FileHandle(forReadingFrom: spool)
        defer { try? input.close() }
        while let chunk = try input.read(upToCount: 1 << 20), !chunk.isEmpty {
            FileHandle.standardOutput.write(chunk)
        }
    }

    /// Copies stdin into a private temporary file (the upload needs its length up front and may retry).
    static func spoolStandardInput() throws -> URL {
        let spool = temporaryFile()
        FileManager.default.createFile(atPath: spool.path, contents: nil, attributes: [.posixPermissions: 0o600])
        let output = try FileHandle(forWritingTo: spool)
        defer { try? output.close() }
        while let chunk = try FileHandle.standardInput.read(upToCount: 1 << 20), !chunk.isEmpty {
            try output.write(contentsOf: chunk)
        }
        return spool
    }

    static func temporaryFile() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("portcullis-cli-\(UUID().uuidString)")
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
}
