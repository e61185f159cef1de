import PortcullisCore

/// Header fields in arrival order, kept as bytes: every name and value lives in one byte buffer, and a field
/// is a pair of ranges over it. Lookup is ASCII case-insensitive; names keep the case they were added with.
///
/// Why bytes: a parsed request head becomes one buffer and one range table (two allocations whatever the
/// number of fields) instead of a `String` per name and value; a `String` is made only when a caller asks
/// for one (`self[name]`, iteration). Hot paths read values with `valueBytes(_:)`, a slice of the shared
/// buffer that costs no copy (e.g. the ~800-byte `Authorization` value hashed into the token cache key).
/// The same type carries response fields, which the connection writes out byte for byte.
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    /// Where one field's name and value lie in `storage`.
    struct FieldRange: Sendable {
        var nameStart: UInt32
        var nameEnd: UInt32
        var valueStart: UInt32
        var valueEnd: UInt32
    }

    /// Names and values, back to back, in the order they were added (removed fields leave no bytes behind).
    private(set) var storage: [UInt8] = []
    private(set) var ranges: [FieldRange] = []

    public init() {}

    public init(dictionaryLiteral elements: (String, String)...) {
        for (name, value) in elements { add(name, value) }
    }

    /// Room for `bytes` bytes of names and values and `fields` fields, so a parsed head grows neither.
    init(reservingBytes bytes: Int, fields: Int) {
        storage.reserveCapacity(bytes)
        ranges.reserveCapacity(fields)
    }

    /// The number of fields.
    public var count: Int { ranges.count }

    public var isEmpty: Bool { ranges.isEmpty }

    public mutating func add(_ name: String, _ value: String) {
        // A response's fields usually fit here: one allocation each instead of a doubling series.
        if storage.capacity == 0 { storage.reserveCapacity(256) }
        if ranges.capacity == 0 { ranges.reserveCapacity(8) }
        let nameStart = storage.count
        storage.append(contentsOf: name.utf8)
        let valueStart = storage.count
        storage.append(contentsOf: value.utf8)
        ranges.append(
            FieldRange(
                nameStart: UInt32(nameStart), nameEnd: UInt32(valueStart),
                valueStart: UInt32(valueStart), valueEnd: UInt32(storage.count)))
    }

    /// Appends a field whose value `write` appends to the given buffer (numbers, dates, entity tags written as
    /// bytes: no `String` per value). The value must be a valid field value, as for `add(_:_:)`.
    public mutating func add(_ name: String, writingValue write: (inout [UInt8]) -> Void) {
        if storage.capacity == 0 { storage.reserveCapacity(256) }
        if ranges.capacity == 0 { ranges.reserveCapacity(8) }
        let nameStart = storage.count
        storage.append(contentsOf: name.utf8)
        let valueStart = storage.count
        write(&storage)
        ranges.append(
            FieldRange(
                nameStart: UInt32(nameStart), nameEnd: UInt32(valueStart),
                valueStart: UInt32(valueStart), valueEnd: UInt32(storage.count)))
    }

    /// Appends a field from raw bytes (the parser, which has validated both).
    mutating func add(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        let nameStart = storage.count
        storage.append(contentsOf: name)
        let valueStart = storage.count
        storage.append(contentsOf: value)
        ranges.append(
            FieldRange(
                nameStart: UInt32(nameStart), nameEnd: UInt32(valueStart),
                valueStart: UInt32(valueStart), valueEnd: UInt32(storage.count)))
    }

    /// Replaces every field of this name with one field.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        add(name, value)
    }

    public mutating func remove(_ name: String) {
        guard firstRange(name) != nil else { return }
        var kept = HTTPHeaders(reservingBytes: storage.count, fields: ranges.count)
        withNameKey(name) { key, buffer in
            for range in ranges where !Self.nameMatches(range, key, buffer) { kept.appendField(from: self, range) }
        }
        self = kept
    }

    /// The first value of the field, if present, as a `String` (made on each call: prefer `valueBytes(_:)` on
    /// hot paths).
    public subscript(name: String) -> String? {
        guard let range = firstRange(name) else { return nil }
        return String(decoding: storage[Int(range.valueStart)..<Int(range.valueEnd)], as: UTF8.self)
    }

    /// The first value of the field as bytes, if present: a slice of the headers' buffer, no copy.
    public func valueBytes(_ name: String) -> ArraySlice<UInt8>? {
        guard let range = firstRange(name) else { return nil }
        return storage[Int(range.valueStart)..<Int(range.valueEnd)]
    }

    /// Every value of the field, in order.
    public func values(_ name: String) -> [String] {
        withNameKey(name) { key, buffer in ranges.filter { Self.nameMatches($0, key, buffer) } }.map { value(of: $0) }
    }

    /// Whether the field's values, in order, are byte for byte `expected`: `values(name)` compared without
    /// making an array or a `String` (a presigned request's signed headers, checked on each request).
    public func values(_ name: String, equal expected: [String]) -> Bool {
        withNameKey(name) { key, buffer in
            var index = 0
            for range in ranges where Self.nameMatches(range, key, buffer) {
                guard index < expected.count else { return false }
                let value = UnsafeBufferPointer(rebasing: buffer[Int(range.valueStart)..<Int(range.valueEnd)])
                var text = expected[index]
                guard text.withUTF8({ $0.elementsEqual(value) }) else { return false }
                index += 1
            }
            return index == expected.count
        }
    }

    public func contains(_ name: String) -> Bool { firstRange(name) != nil }

    /// Every field as `String`s, in order (made on each call).
    public var fields: [(name: String, value: String)] { ranges.map { (self.name(of: $0), value(of: $0)) } }

    public func makeIterator() -> Iterator { Iterator(headers: self) }

    /// Yields `(name, value)` pairs, making their `String`s one field at a time.
    public struct Iterator: IteratorProtocol {
        let headers: HTTPHeaders
        var index = 0

        public mutating func next() -> (name: String, value: String)? {
            guard index < headers.ranges.count else { return nil }
            let range = headers.ranges[index]
            index += 1
            return (headers.name(of: range), headers.value(of: range))
        }
    }

    /// Calls `body` with each field's name and value bytes, in order; valid only during the call.
    func forEachField(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void) {
        storage.withUnsafeBytes { raw in
            for range in ranges {
                body(
                    UnsafeRawBufferPointer(rebasing: raw[Int(range.nameStart)..<Int(range.nameEnd)]),
                    UnsafeRawBufferPointer(rebasing: raw[Int(range.valueStart)..<Int(range.valueEnd)]))
            }
        }
    }

    // MARK: - Private

    private func name(of range: FieldRange) -> String {
        String(decoding: storage[Int(range.nameStart)..<Int(range.nameEnd)], as: UTF8.self)
    }

    private func value(of range: FieldRange) -> String {
        String(decoding: storage[Int(range.valueStart)..<Int(range.valueEnd)], as: UTF8.self)
    }

    private func firstRange(_ name: String) -> FieldRange? {
        withNameKey(name) { key, buffer in
            for range in ranges where Self.nameMatches(range, key, buffer) { return range }
            return nil
        }
    }

    private mutating func appendField(from other: HTTPHeaders, _ range: FieldRange) {
        let nameStart = storage.count
        storage.append(contentsOf: other.storage[Int(range.nameStart)..<Int(range.nameEnd)])
        let valueStart = storage.count
        storage.append(contentsOf: other.storage[Int(range.valueStart)..<Int(range.valueEnd)])
        ranges.append(
            FieldRange(
                nameStart: UInt32(nameStart), nameEnd: UInt32(valueStart),
                valueStart: UInt32(valueStart), valueEnd: UInt32(storage.count)))
    }

    /// Runs `body` with `name`'s bytes and the field buffer, each opened once for a whole scan of the fields
    /// (not once per field: a lookup then costs no reference counting per field).
    private func withNameKey<T>(
        _ name: String, _ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> T
    ) -> T {
        var name = name
        return name.withUTF8 { key in storage.withUnsafeBufferPointer { buffer in body(key, buffer) } }
    }

    private static func nameMatches(
        _ range: FieldRange, _ key: UnsafeBufferPointer<UInt8>, _ buffer: UnsafeBufferPointer<UInt8>
    ) -> Bool {
        let start = Int(range.nameStart)
        guard key.count == Int(range.nameEnd) - start else { return false }
        for i in 0..<key.count where !buffer[start + i].equalsIgnoringASCIICase(key[i]) { return false }
        return true
    }
}
