import Dispatch
import Foundation
import Testing

@testable import Storage

/// The staging file's lock as a second holder sees it: a lock whose owner lets go within moments (a child
/// spawned at that instant still shares the descriptor until its exec) is taken; a lock held on is refused.
@Suite struct StagingLockTests {
    @Test func aLockReleasedWithinMomentsIsTaken() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/staged"
        let owner = try FileSystem.create(path, exclusive: false)
        #expect(FileSystem.tryLock(owner, exclusive: true))
        let second = try FileSystem.create(path, exclusive: false)
        defer { FileSystem.close(second) }
        #expect(!FileSystem.tryLock(second, exclusive: true))  // no patience: refused while held
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(5)) { FileSystem.close(owner) }
        #expect(FileSystem.tryLockPatiently(second))
    }

    @Test func aLockHeldOnIsRefused() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/staged"
        let owner = try FileSystem.create(path, exclusive: false)
        defer { FileSystem.close(owner) }
        #expect(FileSystem.tryLock(owner, exclusive: true))
        let second = try FileSystem.create(path, exclusive: false)
        defer { FileSystem.close(second) }
        #expect(!FileSystem.tryLockPatiently(second))
    }
}
