internal import PortcullisCore

// grapheme-ok(file): the parser walks slices of `Unicode.Scalar`s, never `Character`s

/// A partial-response selector (`fields=`), as Google's JSON APIs take it: `name,metadata`,
/// `items(name,size),nextPageToken`, `a/b` (the same as `a(b)`); member names are ASCII letters, digits, `_`,
/// `-` and `.` — the last two for keys inside a map, as in gsutil rsync's `items/metadata/goog-reserved-file-mtime`
/// (anything else is a `ParseError`, which a surface answers with 400). Parsed once per request; the encoder asks
/// it which members to write.
public struct FieldMask: Sendable, Equatable {
    /// A `fields` value that is not a field mask; `message` says why, in words a client may be shown.
    public struct ParseError: Error, Sendable, Equatable {
        public let message: String
        init(_ message: String) { self.message = message }
    }

    /// Selected members; a nil value selects the member whole.
    private var members: [String: FieldMask?]

    /// Longest `fields` value accepted.
    public static let maxLength = 2048

    /// Parses `text`; an empty value selects everything (returns nil). Unbalanced parentheses, a stray character
    /// or a value longer than `maxLength` is a `ParseError`.
    public static func parse(_ text: String?) throws(FieldMask.ParseError) -> FieldMask? {
        guard let text, !text.isEmpty else { return nil }
        guard text.utf8.count <= maxLength else { throw ParseError("The fields parameter is too long.") }
        var scalars = Array(text.unicodeScalars)[...]
        let mask = try parseList(&scalars, nested: false)
        return mask
    }

    /// Whether `key` is written.
    public func includes(_ key: String) -> Bool { members.keys.contains { $0.bytesEqual(key) } }

    /// What is selected inside `key`: nil when it is selected whole (or not at all: ask `includes` first).
    public func child(_ key: String) -> FieldMask? {
        members.first { $0.key.bytesEqual(key) }?.value ?? nil
    }

    private static func parseList(_ s: inout ArraySlice<Unicode.Scalar>, nested: Bool) throws(ParseError)
        -> FieldMask
    {
        var mask = FieldMask(members: [:])
        while true {
            var name = ""
            try readName(&s, into: &name)
            var child: FieldMask?
            switch s.first {
            case "(":
                s = s.dropFirst()
                child = try parseList(&s, nested: true)
                guard s.first == ")" else { throw ParseError("Invalid fields parameter: unbalanced parentheses.") }
                s = s.dropFirst()
            case "/":
                s = s.dropFirst()
                var rest = s
                let path = try parsePath(&rest)
                s = rest
                child = path
            default:
                break
            }
            if !name.isEmpty { mask.merge(name, child) }
            guard let c = s.first else {
                guard !nested else { throw ParseError("Invalid fields parameter: unbalanced parentheses.") }
                return mask
            }
            if c == ")" {
                guard nested else { throw ParseError("Invalid fields parameter: unbalanced parentheses.") }
                return mask
            }
            s = s.dropFirst()  // ","
        }
    }

    /// `b/c` after `a/`: one member chain (stops at `,` or `)`).
    private static func parsePath(_ s: inout ArraySlice<Unicode.Scalar>) throws(ParseError) -> FieldMask {
        var name = ""
        try readName(&s, into: &name)
        var child: FieldMask?
        if s.first == "/" {
            s = s.dropFirst()
            child = try parsePath(&s)
        } else if s.first == "(" {
            s = s.dropFirst()
            child = try parseList(&s, nested: true)
            guard s.first == ")" else { throw ParseError("Invalid fields parameter: unbalanced parentheses.") }
            s = s.dropFirst()
        }
        var mask = FieldMask(members: [:])
        if !name.isEmpty { mask.merge(name, child) }
        return mask
    }

    /// A member name up to the next `,`, `(`, `)` or `/` (spaces around it skipped).
    private static func readName(_ s: inout ArraySlice<Unicode.Scalar>, into name: inout String) throws(ParseError) {
        while let c = s.first, c != ",", c != "(", c != ")", c != "/" {
            switch c {
            case "a"..."z", "A"..."Z", "0"..."9", "_", "-", ".": name.unicodeScalars.append(c)
            case " ": break
            default: throw ParseError("Invalid fields parameter: unexpected character \(c.escaped(asASCII: true)).")
            }
            s = s.dropFirst()
        }
    }

    /// Selecting a member twice widens the selection (`a(b),a(c)` = `a(b,c)`; `a,a(b)` = `a`).
    /// Member names are ASCII letters, digits, `_`, `-` and `.` only (`readName`), so String keys are exact here.
    private mutating func merge(_ name: String, _ child: FieldMask?) {  // identity-ok: ASCII-only names
        guard let key = members.keys.first(where: { $0.bytesEqual(name) }) else {
            members[name] = .some(child)  // identity-ok: ASCII-only names
            return
        }
        switch (members[key]!, child) {  // identity-ok: ASCII-only names
        case (nil, _), (_, nil): members[key] = .some(nil)  // identity-ok: ASCII-only names
        case (var existing?, let added?):
            for (k, v) in added.members { existing.merge(k, v) }
            members[key] = .some(existing)  // identity-ok: ASCII-only names
        }
    }
}
