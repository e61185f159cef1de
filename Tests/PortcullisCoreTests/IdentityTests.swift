import Testing

@testable import PortcullisCore

/// The model's identity-bearing values compare, hash and merge by bytes, and object names follow one policy.
@Suite struct CoreIdentityTests {
    static let composed = "caf\u{E9}"
    static let decomposed = "cafe\u{301}"

    static func metadata(name: String = "n", custom: [String: String] = [:], tokens: [String] = []) -> ObjectMetadata {
        ObjectMetadata(
            bucket: "b", name: name, generation: 1, size: 0, timeCreated: Timestamp(millisecondsSinceEpoch: 0),
            updated: Timestamp(millisecondsSinceEpoch: 0), customMetadata: custom, downloadTokens: tokens)
    }

    @Test func objectPathsAreEqualAndHashedByBytes() throws {
        let a = try ObjectPath(bucket: "b", name: Self.composed)
        let b = try ObjectPath(bucket: "b", name: Self.decomposed)
        #expect(a != b)
        #expect(Set([a, b]).count == 2)
        #expect(try ObjectPath(bucket: "K", name: "x") != ObjectPath(bucket: "\u{212A}", name: "x"))
        #expect(try ObjectPath(bucket: "b", name: Self.composed) == a)
    }

    /// The object-name policy (ObjectPath's documentation): what is refused, and that everything else — every
    /// other control character, U+FFFE/U+FFFF, astral characters, 1024 bytes — is an ordinary name.
    @Test func objectNamePolicy() throws {
        for refused in [
            "a\u{0}b", "\u{0}", ".", "..", ".well-known/acme-challenge/token", ".portcullis-staging/x",
            "a\rb", "a\nb", "", String(repeating: "\u{10000}", count: 256) + "x",
        ] {
            #expect(throws: ObjectPathError.self, "\(Array(refused.utf8))") {
                try ObjectPath(bucket: "b", name: refused)
            }
        }
        var admitted = (1...0x1F).filter { $0 != 0x0A && $0 != 0x0D }.map { "c\(Character(Unicode.Scalar($0)!))" }
        admitted += [
            "\u{7F}", "\u{80}", "\u{9F}", "\u{FFFE}", "\u{FFFF}", "\u{1F600}", "\u{10FFFF}", "./..", "...",
            ".well-known/acme-challenge", ".portcullis-staging", "x/.portcullis-staging/y", "\u{301}",
            String(repeating: "\u{10000}", count: 256), String(repeating: "n", count: 1024),
        ]
        for name in admitted {
            #expect(try ObjectPath(bucket: "b", name: name).name.bytesEqual(name), "\(Array(name.utf8))")
        }
    }

    @Test func jsonValuesCompareAndHashByBytes() throws {
        #expect(JSONValue.string(Self.composed) != .string(Self.decomposed))
        #expect(JSONValue.object([Self.composed: .int(1)]) != .object([Self.decomposed: .int(1)]))
        #expect(Set([JSONValue.string(Self.composed), .string(Self.decomposed)]).count == 2)
        #expect(JSONValue.array([.string("K")]) != .array([.string("\u{212A}")]))
        #expect(JSONValue.object(["a": .string("x"), "b": .int(1)]) == .object(["b": .int(1), "a": .string("x")]))
        let parsed = try JSONValue.parse(#"{"cafe\u0301": 1}"#)
        #expect(parsed["caf\u{E9}"] == nil)
        #expect(parsed["cafe\u{301}"] == .int(1))
    }

    /// An object whose member names differ only by Unicode normalization is ambiguous: refused. Exact
    /// duplicates keep their old meaning (the last one wins).
    @Test func jsonObjectsWithEquivalentMemberNamesAreRefused() throws {
        #expect(throws: JSONParseError.self) { try JSONValue.parse(#"{"caf\u00e9": 1, "cafe\u0301": 2}"#) }
        #expect(throws: JSONParseError.self) { try JSONValue.parse(#"{"K": 1, "\u212a": 2}"#) }
        #expect(throws: JSONParseError.self) { try JSONValue.parse(#"{"a": {"\u212a": 1, "x": 0, "K": 2}}"#) }
        #expect(try JSONValue.parse(#"{"K": 1, "K": 2}"#) == .object(["K": .int(2)]))
    }

    @Test func modelValuesCompareByBytes() {
        #expect(Self.metadata(name: Self.composed) != Self.metadata(name: Self.decomposed))
        #expect(Self.metadata(custom: [Self.composed: "v"]) != Self.metadata(custom: [Self.decomposed: "v"]))
        #expect(Self.metadata(tokens: [Self.composed]) != Self.metadata(tokens: [Self.decomposed]))
        #expect(Self.metadata(custom: ["k": "v"], tokens: ["t"]) == Self.metadata(custom: ["k": "v"], tokens: ["t"]))
        #expect(Principal(uid: Self.composed, claims: [:]) != Principal(uid: Self.decomposed, claims: [:]))
        #expect(ObjectAttributes(contentType: Self.composed) != ObjectAttributes(contentType: Self.decomposed))
    }

    /// A patch's custom-metadata keys and download tokens are byte strings too.
    @Test func patchesMergeKeysAndTokensByBytes() {
        let current = Self.metadata(custom: [Self.composed: "old"], tokens: [Self.composed, "t"])
        var set = MetadataPatch()
        set.customMetadata = [Self.decomposed: "new"]
        let replaced = set.applied(to: current, now: .now()).customMetadata
        #expect(replaced.bytesEqual([Self.decomposed: "new"]), "\(replaced.map { (Array($0.key.utf8), $0.value) })")
        var remove = MetadataPatch()
        remove.customMetadata = [Self.decomposed: nil]
        remove.removeDownloadTokens = [Self.decomposed]
        remove.addDownloadTokens = [Self.decomposed]
        let kept = remove.applied(to: current, now: .now())
        #expect(kept.customMetadata.bytesEqual([Self.composed: "old"]))
        #expect(kept.downloadTokens.bytesEqual([Self.composed, "t", Self.decomposed]), "\(kept.downloadTokens)")
    }
}
