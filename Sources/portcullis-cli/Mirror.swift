import Foundation
import PortcullisCore
import StorageClient

/// `portcullis-cli mirror SRC DST`: copies every object under one `gs://` bucket or prefix to another, through
/// the gateway, so it works between any two buckets the gateway serves whatever their backends.
///
/// Each object is copied on the server (`StorageReference.copy(to:)`, the JSON API's rewrite): its bytes as
/// stored (a gzip-encoded object stays compressed), its content headers and custom metadata and, for an admin
/// caller, its download tokens, so links already handed out keep working. An object whose copy already exists
/// with the same MD5 is skipped: a second run after an interruption copies only what is missing or changed. One
/// object at a time; the copy's MD5 is checked against the source's.
enum Mirror {
    struct Totals {
        var copied = 0
        var skipped = 0
        var failed = 0
        var bytes: Int64 = 0
    }

    enum Outcome {
        case copied(Int64)
        case skipped
    }

    static func run(_ storage: Storage, _ arguments: ParsedArguments) async throws {
        let spec = CommandSpec.mirror
        guard arguments.operands.count == 2, arguments.operands.allSatisfy({ $0.hasPrefix("gs://") }) else {
            CLIExit.usage("mirror needs SRC and DST, both gs://BUCKET[/PREFIX]", command: spec)
        }
        let source = Commands.reference(storage, arguments.operands[0], spec)
        let destination = Commands.reference(storage, arguments.operands[1], spec)
        if overlaps(source, destination) {
            CLIExit.usage("mirror: SRC and DST overlap (\(source) and \(destination))", command: spec)
        }
        let started = Date()
        let objects = try await Commands.walk(source)
        let progress = ProgressLine()
        var totals = Totals()
        for (index, object) in objects.enumerated() {
            let target = destination.child(Commands.relativeName(object, under: source))
            do {
                switch try await copy(object, to: target) {
                case .copied(let size):
                    totals.copied += 1
                    totals.bytes += size
                    if !progress.enabled { print("copied \(object) -> \(target) \(size) bytes") }
                case .skipped:
                    totals.skipped += 1
                    if !progress.enabled { print("skipped \(object) (same MD5 at \(target))") }
                }
            } catch let failure as TargetedFailure {
                totals.failed += 1
                report("failed \(object): \(failure.line)", progress)
            } catch {
                totals.failed += 1
                report("failed \(object): \(error)", progress)
            }
            progress.show(Int64(index + 1), Int64(objects.count), suffix: "objects")
        }
        progress.finish()
        let seconds = Date().timeIntervalSince(started)
        print(
            "mirror: \(totals.copied) copied, \(totals.skipped) skipped, \(totals.failed) failed, "
                + "\(totals.bytes) bytes, \(String(format: "%.1f", seconds)) seconds")
        if totals.failed > 0 { exit(1) }
    }

    /// Copies one object unless `target` already holds the same bytes (equal MD5). The copy is pinned to the
    /// generation whose MD5 was compared: a source replaced meanwhile fails (412) and is copied on the next run.
    static func copy(_ object: StorageReference, to target: StorageReference) async throws -> Outcome {
        let metadata = try await on(object.description) { try await object.getMetadata() }
        if let existing = try await existingMetadata(target), let have = existing.md5Hash,
            let want = metadata.md5Hash, have.utf8.elementsEqual(want.utf8)
        {
            return .skipped
        }
        let stored = try await on(target.description) {
            try await object.copy(to: target, ifSourceGeneration: metadata.generation)
        }
        if let want = metadata.md5Hash, let got = stored.md5Hash, !got.utf8.elementsEqual(want.utf8) {
            throw TargetedFailure(
                target: target.description,
                error: StorageError(.nonMatchingChecksum, "MD5 \(got) differs from the source's \(want)"))
        }
        return .copied(stored.size)
    }

    /// The destination's metadata, or nil when it holds no such object yet.
    static func existingMetadata(_ target: StorageReference) async throws -> StorageMetadata? {
        do {
            return try await target.getMetadata()
        } catch  where error.httpStatus == 404 && !FailureWording.isBucketMissing(error) {
            return nil
        } catch {
            throw TargetedFailure(target: target.description, error: error)
        }
    }

    /// Whether one location contains the other (same bucket, one prefix a folder of the other).
    static func overlaps(_ a: StorageReference, _ b: StorageReference) -> Bool {
        guard a.bucket.utf8.elementsEqual(b.bucket.utf8) else { return false }
        func contains(_ outer: String, _ inner: String) -> Bool {
            outer.isEmpty || inner.utf8.elementsEqual(outer.utf8) || inner.utf8.starts(with: (outer + "/").utf8)
        }
        return contains(a.fullPath, b.fullPath) || contains(b.fullPath, a.fullPath)
    }

    private static func report(_ line: String, _ progress: ProgressLine) {
        let text = progress.enabled ? "\r\u{1B}[K\(line)\n" : "\(line)\n"
        FileHandle.standardError.write(Data(text.utf8))
    }
}
