import PortcullisCore

/// Removes what crashes and abandoned uploads leave behind: temp files, blob files no index row points at,
/// staging files of sessions that are no longer active, and sessions idle past their expiry.
///
/// Runs synchronously on the caller's thread (start-up, or the store's maintenance queue), using the writer
/// lane for index work. `graceSeconds` protects another live process's in-flight files: only files last
/// modified at least that long ago are removed (0 when this process owns the directory alone).
struct GarbageCollector {
    let store: EmbeddedStore

    func collect(graceSeconds: Int64, includeBlobs: Bool) throws(StorageError) {
        let layout = store.layout
        let now = Timestamp.now()
        let cutoff = now.secondsSinceEpoch - graceSeconds
        func isStale(_ path: String) -> Bool {
            guard graceSeconds > 0 else { return true }
            return (FileSystem.modificationTime(path) ?? 0) <= cutoff
        }
        var removed = 0
        for name in FileSystem.entries(of: layout.tmp) {
            let path = layout.tmp + "/" + name
            if isStale(path), FileSystem.remove(path) { removed += 1 }
        }
        let expiry = now.nanosecondsSinceEpoch - store.options.stagingIdleExpirySeconds * 1_000_000_000
        let activeSessions = try store.writer.runSync { (db) throws(StorageError) -> Set<ExactString> in
            try StagingArea.expire(db, idleBefore: expiry)
            return try StagingArea.activeIDs(db)
        }
        for name in FileSystem.entries(of: layout.staging) where !activeSessions.contains(ExactString(name)) {
            let path = layout.stagingFile(name)
            if isStale(path), FileSystem.remove(path) { removed += 1 }
        }
        if includeBlobs {
            for bucketDirectory in FileSystem.entries(of: layout.blobs) {
                let directory = layout.blobs + "/" + bucketDirectory
                let names = FileSystem.entries(of: directory)
                // One lane hop per bucket directory, not per file.
                let orphans = try store.writer.runSync { (db) throws(StorageError) -> [String] in
                    var orphans = [String]()
                    for name in names {
                        guard let blobID = Int64(name) else { orphans.append(name); continue }
                        if try !ObjectIndex.isReferenced(db, blobID: blobID) { orphans.append(name) }
                    }
                    return orphans
                }
                for name in orphans {
                    let path = directory + "/" + name
                    if isStale(path), FileSystem.remove(path) { removed += 1 }
                }
            }
        }
        if removed > 0 {
            store.options.logger.info(
                "embedded store removed orphaned files",
                [("directory", .string(layout.root)), ("files", .int(Int64(removed)))])
        }
    }
}
