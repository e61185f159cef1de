#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The entry names of a directory, read without touching bytes past each record.
///
/// `readdir` hands out records that are only as long as their name (`d_reclen`), packed in a buffer of its own:
/// the last record can end a few bytes before an unmapped page. Copying the whole `dirent` (`entry.pointee`,
/// 280 bytes) or its 256-byte `d_name` array can therefore read past the mapping and crash the process — a
/// `/metrics` scrape did, counting `/proc/self/fd`. The name is read in place, up to its NUL.
public enum DirectoryEntries {
    /// The names in `path`, without `.` and `..`, as raw bytes (names are bytes, not necessarily UTF-8); nil
    /// when the directory cannot be opened.
    public static func names(in path: String) -> [[UInt8]]? {
        guard let directory = opendir(path) else { return nil }
        defer { closedir(directory) }
        var names: [[UInt8]] = []
        while let entry = readdir(directory) {
            let name = nameBytes(of: entry)
            if name == [0x2E] || name == [0x2E, 0x2E] { continue }
            names.append(name)
        }
        return names
    }

    /// The NUL-terminated name of one record, read from where it lies.
    static func nameBytes(of entry: UnsafePointer<dirent>) -> [UInt8] {
        let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        let name = UnsafeRawPointer(entry).advanced(by: offset).assumingMemoryBound(to: CChar.self)
        return Array(UnsafeRawBufferPointer(start: name, count: strlen(name)))
    }
}
