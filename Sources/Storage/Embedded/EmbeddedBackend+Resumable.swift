public import PortcullisCore

/// Resumable uploads of the embedded backend (see `StagingArea` for the on-disk protocol).
extension EmbeddedBackend {
    public func startUpload(
        _ object: ObjectPath, attributes: ObjectAttributes,
        declaredSize: Int64?
    ) async throws(StorageError) -> String {
        try check(object)
        if let declaredSize, declaredSize < 0 { throw .invalidArgument("negative upload size") }
        let id = FileSystem.randomIdentifier()
        try await store.writer.run { (db) throws(StorageError) in
            try StagingArea.insert(
                db, id: id, object: object, attributes: attributes, declaredSize: declaredSize,
                now: .now())
        }
        return id
    }

    public func appendChunk(
        _ handle: String, object: ObjectPath, offset: Int64,
        body: any ByteStream
    ) async throws(StorageError) -> Int64 {
        let session = try await activeSession(handle, object: object)
        guard offset == session.size else { throw .offsetMismatch(current: session.size) }
        let path = store.layout.stagingFile(handle)
        let pool = store.blobs.pool
        // One appender per session, across processes: an exclusive flock held for the whole append.
        let appender = try await pool.run { () throws(StorageError) -> FileAppender? in
            let fd = try FileSystem.create(path, exclusive: false)
            guard FileSystem.tryLockPatiently(fd) else {
                FileSystem.close(fd)
                return nil
            }
            return FileAppender(path: path, descriptor: fd, position: offset)
        }
        guard let appender else { throw .offsetMismatch(current: session.size) }
        var reserved: Int64 = 0
        var pipeline: UploadPipeline?
        do throws(StorageError) {
            // Re-read under the lock: another process may have appended since the first look.
            let locked = try await activeSession(handle, object: object)
            guard locked.size == offset else { throw .offsetMismatch(current: locked.size) }
            // Continue this process's running checksum when it covers exactly the bytes before `offset` (its
            // lane may still be hashing the previous chunk: they stay in order on it).
            let running: RunningChecksum? =
                offset == 0
                ? store.blobs.runningChecksum()
                : store.stagedChecksums.withLock { map in
                    map[ExactString(handle)].flatMap { $0.fed == offset ? $0 : nil }
                }
            try await pool.run { () throws(StorageError) in
                try FileSystem.truncate(appender.descriptor, to: offset, path: path)
            }
            let staged = try await store.reader().run { (db) throws(StorageError) -> Int64 in
                try StagingArea.activeBytes(db)
            }
            let ceiling = store.options.maxStagedBytes
            let declaredRoom = locked.declaredSize.map { $0 - offset }
            let store = self.store
            let writer = store.blobs.pipeline(into: appender, checksum: running)
            pipeline = writer
            _ = try await BodyPump.pump(
                body, limit: declaredRoom,
                overflow: { .sizeMismatch(expected: locked.declaredSize ?? 0, actual: offset + $0) }
            ) {
                (batch: BodyBatch) async throws(StorageError) in
                let count = Int64(batch.count)
                reserved += count
                let total = store.stagingInFlight.add(count, ordering: .relaxed).newValue
                if staged + total > ceiling {
                    throw .unavailable(reason: "resumable staging space is full", retryAfter: 60)
                }
                try await writer.submit(batch)
            }
            // The chunk is acknowledged only once its bytes are durable (and, for a new staging file, its name);
            // not once they are hashed: the running checksum is this process's memory, never persisted, and
            // finalize waits for it (or, without it, reads the staged file).
            let newSize = try await writer.finish(sync: true)
            if offset == 0 {
                let directory = store.layout.staging
                try await pool.run { () throws(StorageError) in try FileSystem.syncDirectory(directory) }
            }
            let recorded = try await store.writer.run { (db) throws(StorageError) -> Bool in
                try StagingArea.recordAppend(db, id: handle, oldSize: offset, newSize: newSize, now: .now())
            }
            guard recorded else { throw .invalidArgument("The upload is no longer active.") }
            store.stagedChecksums.withLock { map in
                if let running, running.fed == newSize,
                    map[ExactString(handle)] != nil || map.count < EmbeddedStore.maxTrackedChecksums
                {
                    map[ExactString(handle)] = running
                } else {
                    map[ExactString(handle)] = nil
                }
            }
            store.stagingInFlight.subtract(reserved, ordering: .relaxed)
            await writer.close()
            return newSize
        } catch {
            store.stagingInFlight.subtract(reserved, ordering: .relaxed)
            // A failed chunk may have fed the running checksum bytes that are not staged: forget it (finalize
            // then reads the staged file).
            if let pipeline, let running = pipeline.checksum, running.fed != offset {
                store.stagedChecksums.withLock { map in
                    if map[ExactString(handle)] === running { map[ExactString(handle)] = nil }
                }
            }
            // Drop a partial chunk now (the next append would truncate it anyway), after any queued write.
            let cleanup: @Sendable (FileAppender) -> Void = { file in
                _ = try? FileSystem.truncate(file.descriptor, to: offset, path: path)
                file.close()
            }
            if let pipeline {
                await pipeline.abandon(cleanup)
            } else {
                await pool.runQuietly { cleanup(appender) }
            }
            throw error
        }
    }

    public func stagedSize(_ handle: String, object: ObjectPath) async throws(StorageError) -> Int64 {
        try await uploadState(handle, object: object).stagedSize()
    }

    public func uploadState(_ handle: String, object: ObjectPath) async throws(StorageError) -> UploadState {
        let session = try await session(handle, object: object)
        switch session.state {
        case .active: return .active(stagedSize: session.size)
        case .final: return .finalized(size: session.size, generation: session.generation ?? 0)
        case .cancelled: return .cancelled
        }
    }

    public func finalizeUpload(
        _ handle: String, object: ObjectPath, attributes: ObjectAttributes,
        options: WriteOptions
    ) async throws(StorageError) -> ObjectMetadata {
        _ = try await activeSession(handle, object: object)
        let path = store.layout.stagingFile(handle)
        let pool = store.blobs.pool
        let lock = try await pool.run { () throws(StorageError) -> FileAppender? in
            let fd = try FileSystem.create(path, exclusive: false)
            guard FileSystem.tryLockPatiently(fd) else {
                FileSystem.close(fd)
                return nil
            }
            return FileAppender(path: path, descriptor: fd, position: 0)
        }
        guard let lock else {
            throw .unavailable(reason: "a chunk of this upload is still being stored", retryAfter: 1)
        }
        do throws(StorageError) {
            let session = try await activeSession(handle, object: object)
            if let declared = session.declaredSize, declared != session.size {
                throw .sizeMismatch(expected: declared, actual: session.size)
            }
            // Drop whatever a crashed append left past the recorded size: the published blob is exactly the object.
            try await pool.run { () throws(StorageError) in
                try FileSystem.truncate(lock.descriptor, to: session.size, path: path)
                try lock.sync()
            }
            let tracked = store.stagedChecksums.withLock { map in map[ExactString(handle)] }
            let checksums: ObjectChecksums
            if let tracked, tracked.fed == session.size {
                checksums = await tracked.value().finish()  // computed while the chunks were appended; no re-read
            } else {
                checksums = try await store.blobs.checksums(ofFile: path, size: session.size)
            }
            try verify(checksums, options: options)
            let metadata = try await commit(
                object, source: path, keepSource: true, checksums: checksums,
                attributes: attributes, options: options, stagingID: handle)
            store.stagedChecksums.withLock { map in map[ExactString(handle)] = nil }
            await pool.runQuietly {
                FileSystem.remove(path)
                lock.close()
            }
            return metadata
        } catch {
            await pool.runQuietly { lock.close() }
            throw error
        }
    }

    public func cancelUpload(_ handle: String, object: ObjectPath) async throws(StorageError) {
        let session = try await session(handle, object: object)
        guard session.state == .active else { return }
        _ = try await store.writer.run { (db) throws(StorageError) -> Bool in
            try StagingArea.close(db, id: handle, state: .cancelled, generation: nil, now: .now())
        }
        store.stagedChecksums.withLock { map in map[ExactString(handle)] = nil }
        await store.blobs.remove(store.layout.stagingFile(handle))
    }

    // MARK: - Sessions

    private func session(_ handle: String, object: ObjectPath) async throws(StorageError) -> StagingArea.Session {
        try check(object)
        guard DirectoryLayout.isStagingID(handle) else { throw .notFound }
        let session = try await store.reader().run { (db) throws(StorageError) -> StagingArea.Session? in
            try StagingArea.fetch(db, id: handle)
        }
        guard let session, session.bucket.bytesEqual(object.bucket), session.name.bytesEqual(object.name) else {
            throw .notFound
        }
        return session
    }

    private func activeSession(_ handle: String, object: ObjectPath) async throws(StorageError) -> StagingArea.Session {
        let session = try await session(handle, object: object)
        switch session.state {
        case .active: return session
        case .final: throw .invalidArgument("The upload was already finalized.")
        case .cancelled: throw .invalidArgument("The upload was cancelled.")
        }
    }
}
