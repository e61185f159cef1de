import Testing

@testable import PortcullisCore

#if canImport(Glibc)
import Glibc
#endif

/// `DirectoryEntries`: names as the directory holds them, and never a byte read past a record.
@Suite struct DirectoryEntriesTests {
    @Test func namesAreTheEntriesAsBytesWithoutDotAndDotDot() throws {
        let directory = "/tmp/pc-dirents-\(UInt64.random(in: 0...UInt64.max))"
        #expect(mkdir(directory, 0o700) == 0)
        var expected: Set<[UInt8]> = [
            Array("a".utf8), Array("..a".utf8), Array(".hidden".utf8), Array("é".utf8), Array("e\u{301}".utf8),
            [UInt8](repeating: UInt8(ascii: "n"), count: 255),
        ]
        for i in 0..<300 { expected.insert(Array("f\(i)".utf8)) }
        defer {
            for name in expected { _ = unlink(directory + "/" + String(decoding: name, as: UTF8.self)) }
            rmdir(directory)
        }
        for name in expected {
            let fd = open(directory + "/" + String(decoding: name, as: UTF8.self), O_CREAT | O_WRONLY, 0o600)
            #expect(fd >= 0)
            close(fd)
        }
        let names = try #require(DirectoryEntries.names(in: directory))
        #expect(names.count == expected.count)
        #expect(Set(names) == expected)
        #expect(DirectoryEntries.names(in: directory + "/missing") == nil)
    }

    /// A record whose name ends where its mapping ends, with an inaccessible page after it (what `readdir` can
    /// hand out at the end of its buffer): the name is read up to its NUL and nothing beyond. Copying the whole
    /// `dirent`, as `entry.pointee` does, faults on the guard page.
    @Test func aRecordEndingAtAnUnmappedPageIsReadInPlace() throws {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let mapping = try #require(
            mmap(nil, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0).flatMap {
                $0 == MAP_FAILED ? nil : $0
            })
        defer { munmap(mapping, 2 * page) }
        #expect(mprotect(mapping + page, page, PROT_NONE) == 0)
        let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        // A name (with its NUL) that makes the record end exactly at the page boundary, the record 8-aligned.
        var length = (8 - offset % 8) % 8
        if length < 2 { length += 8 }
        let name = [UInt8](repeating: UInt8(ascii: "x"), count: length - 1)
        let start = page - offset - length
        (mapping + start + offset).copyMemory(from: name + [0], byteCount: length)
        let entry = UnsafeRawPointer(mapping + start).assumingMemoryBound(to: dirent.self)
        #expect(DirectoryEntries.nameBytes(of: entry) == name)
    }
}
