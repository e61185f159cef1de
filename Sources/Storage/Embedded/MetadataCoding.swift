import PortcullisCore

/// JSON columns of the index (custom metadata, download tokens, staged attributes), written and read with
/// PortcullisCore's `JSONValue`. A column that does not parse reads as empty rather than failing the request:
/// the index is ours, and only a damaged database could hold such a value.
enum MetadataCoding {
    static func encode(_ map: [String: String]) -> String {
        JSONValue.object(map.mapValues { .string($0) }).encoded()
    }

    static func encode(_ list: [String]) -> String {
        JSONValue.array(list.map { .string($0) }).encoded()
    }

    static func decodeMap(_ text: String?) -> [String: String] {
        guard let text, let object = (try? JSONValue.parse(text))?.objectValue else { return [:] }
        return object.compactMapValues { $0.stringValue }
    }

    static func decodeList(_ text: String?) -> [String] {
        guard let text, let array = (try? JSONValue.parse(text))?.arrayValue else { return [] }
        return array.compactMap { $0.stringValue }
    }

    /// `decodeMap` of a column's bytes; the empty object, the usual value, is read without parsing.
    static func decodeMap(bytes: UnsafeBufferPointer<UInt8>?) -> [String: String] {
        guard let bytes else { return [:] }
        if bytes.count == 2, bytes[0] == UInt8(ascii: "{"), bytes[1] == UInt8(ascii: "}") { return [:] }
        return decodeMap(String(decoding: bytes, as: UTF8.self))
    }

    /// `decodeList` of a column's bytes. What `encode(_: [String])` writes for strings that need no escape —
    /// `[]`, `["a"]`, `["a","b"]`, download tokens always — is split directly into `String`s: the same values the
    /// parser gives (the bytes between quotes are the string; invalid UTF-8 is repaired alike), without the
    /// column `String`, the parser's copy and its `JSONValue`s. Anything else (escapes, control characters,
    /// spacing, another shape) goes through the parser.
    static func decodeList(bytes: UnsafeBufferPointer<UInt8>?) -> [String] {
        guard let bytes else { return [] }
        if let list = plainStringList(bytes) { return list }
        return decodeList(String(decoding: bytes, as: UTF8.self))
    }

    private static func plainStringList(_ bytes: UnsafeBufferPointer<UInt8>) -> [String]? {
        let quote = UInt8(ascii: "\"")
        guard bytes.count >= 2, bytes[0] == UInt8(ascii: "["), bytes[bytes.count - 1] == UInt8(ascii: "]") else {
            return nil
        }
        if bytes.count == 2 { return [] }
        var list: [String] = []
        var i = 1
        while true {
            guard i < bytes.count, bytes[i] == quote else { return nil }
            let start = i + 1
            var end = start
            while end < bytes.count, bytes[end] != quote {
                if bytes[end] < 0x20 || bytes[end] == UInt8(ascii: "\\") { return nil }
                end += 1
            }
            guard end < bytes.count else { return nil }
            list.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self))
            i = end + 1
            guard i < bytes.count else { return nil }
            if bytes[i] == UInt8(ascii: "]") { return i == bytes.count - 1 ? list : nil }
            guard bytes[i] == UInt8(ascii: ",") else { return nil }
            i += 1
        }
    }

    static func encode(_ attributes: ObjectAttributes) -> String {
        var object: [String: JSONValue] = [
            "customMetadata": .object(attributes.customMetadata.mapValues { .string($0) }),
            "downloadTokens": .array(attributes.downloadTokens.map { .string($0) }),
        ]
        let fields: [(String, String?)] = [
            ("contentType", attributes.contentType), ("contentEncoding", attributes.contentEncoding),
            ("contentDisposition", attributes.contentDisposition), ("contentLanguage", attributes.contentLanguage),
            ("cacheControl", attributes.cacheControl), ("storageClass", attributes.storageClass),
            ("customTime", attributes.customTime.map { String($0.nanosecondsSinceEpoch) }),
            ("owner", attributes.owner),
        ]
        for (key, value) in fields { if let value { object[key] = .string(value) } }
        return JSONValue.object(object).encoded()
    }

    static func decodeAttributes(_ text: String?) -> ObjectAttributes {
        guard let text, let json = try? JSONValue.parse(text) else { return ObjectAttributes() }
        var attributes = ObjectAttributes(
            contentType: json["contentType"]?.stringValue, contentEncoding: json["contentEncoding"]?.stringValue,
            contentDisposition: json["contentDisposition"]?.stringValue,
            contentLanguage: json["contentLanguage"]?.stringValue, cacheControl: json["cacheControl"]?.stringValue,
            customMetadata: (json["customMetadata"]?.objectValue ?? [:]).compactMapValues { $0.stringValue },
            downloadTokens: (json["downloadTokens"]?.arrayValue ?? []).compactMap { $0.stringValue },
            storageClass: json["storageClass"]?.stringValue,
            customTime: json["customTime"]?.stringValue.flatMap { Int64($0) }.map {
                Timestamp(nanosecondsSinceEpoch: $0)
            })
        attributes.owner = json["owner"]?.stringValue
        return attributes
    }
}
