import Foundation
import Synchronization
import Testing

@testable import Storage

/// The staging file's lock as a second holder sees it: a lock whose owner lets go while the second one waits
/// (a child spawned at that instant still shares the descriptor until its exec) is taken; a lock held on is
/// refused. The pauses between attempts are the test's: no timing is involved.
@Suite struct StagingLockTests {
    @Test func aLockReleasedBetweenAttemptsIsTaken() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/staged"
        let owner = try FileSystem.create(path, exclusive: false)
        #expect(FileSystem.tryLock(owner, exclusive: true))
        let second = try FileSystem.create(path, exclusive: false)
        defer { FileSystem.close(second) }
        #expect(!FileSystem.tryLock(second, exclusive: true))  // refused while held
        let pauses = Atomic(0)
        let taken = FileSystem.tryLockPatiently(second) {
            // The owner lets go after the third refused attempt.
            if pauses.add(1, ordering: .relaxed).newValue == 3 { FileSystem.close(owner) }
        }
        #expect(taken)
        #expect(pauses.load(ordering: .relaxed) == 3)
    }

    @Test func aLockHeldOnIsRefused() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/staged"
        let owner = try FileSystem.create(path, exclusive: false)
        defer { FileSystem.close(owner) }
        #expect(FileSystem.tryLock(owner, exclusive: true))
        let second = try FileSystem.create(path, exclusive: false)
        defer { FileSystem.close(second) }
        let pauses = Atomic(0)
        #expect(!FileSystem.tryLockPatiently(second) { pauses.add(1, ordering: .relaxed) })
        #expect(pauses.load(ordering: .relaxed) == 10)  // every attempt made, then refused
    }
}
