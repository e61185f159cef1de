public import PortcullisCore

/// Writes one JSON object member by member, leaving out what a `fields` mask does not select (nil mask:
/// everything). Values are escaped by `JSONValue.encodeString`; numbers the JSON API carries as strings are
/// written as decimal strings.
public struct JSONObjectWriter {
    private(set) var out: [UInt8]
    private var empty = true
    public let mask: FieldMask?

    public init(mask: FieldMask?, capacity: Int = 512) {
        out = []
        out.reserveCapacity(capacity)
        out.append(UInt8(ascii: "{"))
        self.mask = mask
    }

    /// Starts member `key` when the mask selects it; returns false (writing nothing) otherwise.
    private mutating func open(_ key: String) -> Bool {
        if let mask, !mask.includes(key) { return false }
        if !empty { out.append(UInt8(ascii: ",")) }
        empty = false
        JSONValue.encodeString(key, into: &out)
        out.append(UInt8(ascii: ":"))
        return true
    }

    public mutating func string(_ key: String, _ value: String?) {
        guard let value, open(key) else { return }
        JSONValue.encodeString(value, into: &out)
    }

    /// A 64-bit integer as the JSON API writes it: a decimal string.
    public mutating func decimal(_ key: String, _ value: Int64?) {
        guard let value, open(key) else { return }
        out.append(UInt8(ascii: "\""))
        DecimalText.append(value, to: &out)
        out.append(UInt8(ascii: "\""))
    }

    public mutating func bool(_ key: String, _ value: Bool) {
        guard open(key) else { return }
        out.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// `value` in RFC 3339 with milliseconds; `keepingPrecision` writes six or nine fractional digits when the
    /// value has them — for times a client chose (`customTime`), which Cloud Storage gives back as set.
    public mutating func timestamp(_ key: String, _ value: Timestamp?, keepingPrecision: Bool = false) {
        guard let value, open(key) else { return }
        var digits = 3
        if keepingPrecision {
            let belowMilliseconds = value.nanosecondsSinceEpoch % 1_000_000
            if belowMilliseconds != 0 { digits = belowMilliseconds % 1_000 == 0 ? 6 : 9 }
        }
        out.append(UInt8(ascii: "\""))
        value.append(fractionDigits: digits, to: &out)
        out.append(UInt8(ascii: "\""))
    }

    /// A nested value written by `body`, which gets the mask of what is selected inside it.
    public mutating func nested(_ key: String, _ body: (inout [UInt8], FieldMask?) -> Void) {
        guard open(key) else { return }
        body(&out, mask?.child(key))
    }

    /// A string member written in pieces by `body` between the quotes, for values that are concatenations
    /// (an id, a link) — no intermediate `String`. `body` appends escaped bytes (`JSONValue.appendEscaped`,
    /// or bytes that need no escape).
    public mutating func string(_ key: String, pieces body: (inout [UInt8]) -> Void) {
        guard open(key) else { return }
        out.append(UInt8(ascii: "\""))
        body(&out)
        out.append(UInt8(ascii: "\""))
    }

    /// `{"k":"v",…}` with keys in byte order. `joined`, when its values are not empty, is one more member whose
    /// value is those values joined by commas, in place of any entry of `map` under the same key (download
    /// tokens beside custom metadata) — written without copying the map. A mask that selects entries inside the
    /// map (`metadata/goog-reserved-file-mtime`, as gsutil rsync asks) writes only those.
    public mutating func stringMap(
        _ key: String, _ map: [String: String], joined: (key: String, values: [String])? = nil
    ) {
        let extra = joined.flatMap { $0.values.isEmpty ? nil : $0 }
        let selected = mask?.child(key)
        guard !map.isEmpty || extra != nil, open(key) else { return }
        out.append(UInt8(ascii: "{"))
        var first = true
        func member(_ key: String, _ write: (inout [UInt8]) -> Void) {
            if let selected, !selected.includes(key) { return }
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            JSONValue.encodeString(key, into: &out)
            out.append(UInt8(ascii: ":"))
            write(&out)
        }
        func writeExtra(_ extra: (key: String, values: [String])) {
            member(extra.key) { out in
                out.append(UInt8(ascii: "\""))
                for (i, value) in extra.values.enumerated() {
                    if i > 0 { out.append(UInt8(ascii: ",")) }
                    JSONValue.appendEscaped(value, into: &out)
                }
                out.append(UInt8(ascii: "\""))
            }
        }
        var pending = extra
        for entry in map.sorted(by: { $0.key.bytesLess(than: $1.key) }) {
            if let extra, entry.key.bytesEqual(extra.key) { continue }
            if let extra = pending, extra.key.bytesLess(than: entry.key) {
                writeExtra(extra)
                pending = nil
            }
            member(entry.key) { JSONValue.encodeString(entry.value, into: &$0) }
        }
        if let extra = pending { writeExtra(extra) }
        out.append(UInt8(ascii: "}"))
    }

    public mutating func finish() -> [UInt8] {
        out.append(UInt8(ascii: "}"))
        return out
    }
}
