extension StringProtocol {
    /// Calls `body` with this text's UTF-8 bytes in one buffer: a native string's own storage, else a copy.
    ///
    /// For parsers on the request path: a walk over a `Substring.UTF8View` pays an index check per byte (a
    /// presigned URL's long query cost whole per cents of an S3 GetObject walked that way), a buffer walk does
    /// not.
    @inlinable
    public func withContiguousUTF8<R, E: Error>(_ body: (UnsafeBufferPointer<UInt8>) throws(E) -> R) throws(E) -> R {
        let result = utf8.withContiguousStorageIfAvailable { bytes in
            Result { () throws(E) -> R in try body(bytes) }
        }
        if let result { return try result.get() }
        return try Array(utf8).withUnsafeBufferPointer { bytes in
            Result { () throws(E) -> R in try body(bytes) }
        }.get()
    }
}
