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

    static func encode(_ attributes: ObjectAttributes) -> String {
        var object: [String: JSONValue] = [
            "customMetadata": .object(attributes.customMetadata.mapValues { .string($0) }),
            "downloadTokens": .array(attributes.downloadTokens.map { .string($0) }),
        ]
        let fields: [(String, String?)] = [
            ("contentType", attributes.contentType), ("contentEncoding", attributes.contentEncoding),
            ("contentDisposition", attributes.contentDisposition), ("contentLanguage", attributes.contentLanguage),
            ("cacheControl", attributes.cacheControl),
        ]
        for (key, value) in fields { if let value { object[key] = .string(value) } }
        return JSONValue.object(object).encoded()
    }

    static func decodeAttributes(_ text: String?) -> ObjectAttributes {
        guard let text, let json = try? JSONValue.parse(text) else { return ObjectAttributes() }
        return ObjectAttributes(
            contentType: json["contentType"]?.stringValue, contentEncoding: json["contentEncoding"]?.stringValue,
            contentDisposition: json["contentDisposition"]?.stringValue,
            contentLanguage: json["contentLanguage"]?.stringValue, cacheControl: json["cacheControl"]?.stringValue,
            customMetadata: (json["customMetadata"]?.objectValue ?? [:]).compactMapValues { $0.stringValue },
            downloadTokens: (json["downloadTokens"]?.arrayValue ?? []).compactMap { $0.stringValue })
    }
}
