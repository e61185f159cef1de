import PortcullisCore

/// One row of the object index: the metadata of the current generation plus the blob file holding its bytes.
///
/// `blobID` is the generation allocated when the bytes were published; it equals `metadata.generation` except
/// when a concurrent writer committed in between and this commit had to take a later generation (see
/// `ObjectIndex.commit`), and after a rename (`AtomicRenames`: the row takes a new name and generation and keeps
/// its blob). Blob files are named by `blobID`, never by the object name.
struct StoredObject: Sendable, Equatable {
    var metadata: ObjectMetadata
    var blobID: Int64
}
