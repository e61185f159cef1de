import PortcullisCore

/// GCS object resource JSON ↔ `ObjectMetadata`. Download tokens live in the custom metadata key
/// `firebaseStorageDownloadTokens` (comma-separated), exactly as Firebase stores them, so existing buckets work.
enum GCSObjectCoding {
    static func metadata(from json: JSONValue, bucket: String) throws(StorageError) -> ObjectMetadata {
        var fields = ResourceFields()
        for (key, value) in json.objectValue ?? [:] {
            guard let field = ResourceFields.field(key.utf8) else { continue }
            guard field == .metadata else {
                fields.take(field, value)
                continue
            }
            for (custom, value) in value.objectValue ?? [:] {
                if let value = value.stringValue { fields.takeCustom(custom, value) }
            }
        }
        return try fields.metadata(bucket: bucket)
    }

    /// `metadata(from:bucket:)` read straight from the resource's bytes (`JSONReader`): the proxied metadata read's
    /// path, which never needs the resource as a dictionary.
    static func metadata(fromResource bytes: [UInt8], bucket: String) throws(StorageError) -> ObjectMetadata {
        var fields = ResourceFields()
        var reader = JSONReader(bytes)
        do throws(JSONParseError) {
            try reader.readObject { reader, key throws(JSONParseError) in
                guard let field = ResourceFields.field(key.utf8) else { return try reader.skipValue() }
                guard field == .metadata else { return try fields.take(field, from: &reader) }
                guard reader.nextIsObject else { return try reader.skipValue() }
                try reader.readObject { reader, custom throws(JSONParseError) in
                    if let value = try reader.readString() { fields.takeCustom(custom.string, value) }
                }
            }
            try reader.finish()
        } catch {
            throw .internalError("GCS object resource is not JSON: \(error)")
        }
        return try fields.metadata(bucket: bucket)
    }

    /// The writable part of a resource: what an upload or a full update (`PUT`) sends.
    static func resource(
        name: String?, contentType: String?, contentEncoding: String?, contentDisposition: String?,
        contentLanguage: String?, cacheControl: String?, custom: [String: String],
        tokens: [String], storageClass: String? = nil, customTime: Timestamp? = nil
    ) -> JSONValue {
        var object = [String: JSONValue]()
        if let name { object["name"] = .string(name) }
        if let contentType { object["contentType"] = .string(contentType) }
        if let contentEncoding { object["contentEncoding"] = .string(contentEncoding) }
        if let contentDisposition { object["contentDisposition"] = .string(contentDisposition) }
        if let contentLanguage { object["contentLanguage"] = .string(contentLanguage) }
        if let cacheControl { object["cacheControl"] = .string(cacheControl) }
        if let storageClass { object["storageClass"] = .string(storageClass) }
        if let customTime { object["customTime"] = .string(customTime.rfc3339Milliseconds) }
        var metadata = custom.mapValues { JSONValue.string($0) }
        if !tokens.isEmpty {
            metadata[exactly: ObjectMetadata.downloadTokensKey] = .string(tokens.joined(separator: ","))
        }
        if !metadata.isEmpty { object["metadata"] = .object(metadata) }
        return .object(object)
    }

    static func resource(_ attributes: ObjectAttributes, name: String?) -> JSONValue {
        resource(
            name: name, contentType: attributes.contentType, contentEncoding: attributes.contentEncoding,
            contentDisposition: attributes.contentDisposition, contentLanguage: attributes.contentLanguage,
            cacheControl: attributes.cacheControl, custom: attributes.customMetadata,
            tokens: attributes.downloadTokens, storageClass: attributes.storageClass,
            customTime: attributes.customTime)
    }

    static func resource(_ metadata: ObjectMetadata) -> JSONValue {
        resource(
            name: nil, contentType: metadata.contentType, contentEncoding: metadata.contentEncoding,
            contentDisposition: metadata.contentDisposition, contentLanguage: metadata.contentLanguage,
            cacheControl: metadata.cacheControl, custom: metadata.customMetadata,
            tokens: metadata.downloadTokens, customTime: metadata.customTime)
    }
}

/// The members of an object resource the gateway keeps, taken one at a time — from a parsed `JSONValue` or from
/// the bytes (`JSONReader`) — so the mapping from GCS's members to `ObjectMetadata` is written once for both.
private struct ResourceFields {
    enum Field {
        case name, generation, metageneration, size, timeCreated, updated, customTime, timeDeleted
        case md5Hash, crc32c, storageClass, contentType, contentEncoding, contentDisposition, contentLanguage
        case cacheControl, metadata

        /// How GCS writes the member's value.
        enum Kind {
            /// A string; the name may be empty, any other empty text is no value.
            case name, text
            /// A 64-bit integer, sent as a string of digits (emulators sometimes send a number).
            case integer
            /// An RFC 3339 time.
            case time
        }

        var kind: Kind {
            switch self {
            case .name: .name
            case .generation, .metageneration, .size: .integer
            case .timeCreated, .updated, .customTime, .timeDeleted: .time
            default: .text
            }
        }
    }

    /// The members kept, by the UTF-8 of their names: looked up with no `String` per member read.
    private static let fields: [(name: [UInt8], field: Field)] = {
        let names: [(String, Field)] = [
            ("name", .name), ("generation", .generation), ("metageneration", .metageneration), ("size", .size),
            ("timeCreated", .timeCreated), ("updated", .updated), ("customTime", .customTime),
            ("timeDeleted", .timeDeleted), ("md5Hash", .md5Hash), ("crc32c", .crc32c),
            ("storageClass", .storageClass), ("contentType", .contentType), ("contentEncoding", .contentEncoding),
            ("contentDisposition", .contentDisposition), ("contentLanguage", .contentLanguage),
            ("cacheControl", .cacheControl), ("metadata", .metadata),
        ]
        return names.map { (name: Array($0.0.utf8), field: $0.1) }
    }()

    /// The field member `key` (its name's UTF-8) fills, if the gateway keeps it.
    static func field(_ key: some Collection<UInt8>) -> Field? {
        fields.first { $0.name.count == key.count && $0.name.elementsEqual(key) }?.field
    }

    private var name: String?
    private var generation, metageneration, size: Int64?
    private var timeCreated, updated, customTime, timeDeleted: Timestamp?
    private var md5Hash, crc32c, storageClass, contentType, contentEncoding, contentDisposition: String?
    private var contentLanguage, cacheControl: String?
    private var custom: [String: String] = [:]
    private var tokens: [String] = []
    /// Two custom keys that differ in bytes but are canonically equivalent: one slot of `custom`, refused.
    private var ambiguous = false

    /// Takes `field` from a parsed resource's member.
    mutating func take(_ field: Field, _ value: JSONValue) {
        switch field.kind {
        case .name, .text: set(field, text: value.stringValue)
        case .integer: set(field, integer: value.stringValue.flatMap { Int64($0) } ?? value.int64Value)
        case .time: set(field, time: value.stringValue.flatMap { Timestamp(rfc3339: $0) })
        }
    }

    /// Takes `field` from the value `reader` reads next. Integers and times are parsed from the bytes.
    mutating func take(_ field: Field, from reader: inout JSONReader) throws(JSONParseError) {
        switch field.kind {
        case .name, .text: set(field, text: try reader.readString())
        case .integer:
            if reader.nextIsString {
                set(field, integer: try reader.readStringBytes().flatMap(DecimalText.int64))
            } else {
                set(field, integer: try reader.readValue().int64Value)
            }
        case .time: set(field, time: try reader.readStringBytes().flatMap { Timestamp(rfc3339UTF8: $0) })
        }
    }

    private mutating func set(_ field: Field, text value: String?) {
        // An empty text is no value.
        let text = value.flatMap { $0.isEmpty ? nil : $0 }
        switch field {
        case .name: name = value
        case .md5Hash: md5Hash = text
        case .crc32c: crc32c = text
        case .storageClass: storageClass = text
        case .contentType: contentType = text
        case .contentEncoding: contentEncoding = text
        case .contentDisposition: contentDisposition = text
        case .contentLanguage: contentLanguage = text
        case .cacheControl: cacheControl = text
        default: break
        }
    }

    private mutating func set(_ field: Field, integer value: Int64?) {
        switch field {
        case .generation: generation = value
        case .metageneration: metageneration = value
        case .size: size = value
        default: break
        }
    }

    private mutating func set(_ field: Field, time value: Timestamp?) {
        switch field {
        case .timeCreated: timeCreated = value
        case .updated: updated = value
        case .customTime: customTime = value
        case .timeDeleted: timeDeleted = value
        default: break
        }
    }

    /// One member of the resource's custom `metadata`; the download tokens live in one of them.
    mutating func takeCustom(_ key: String, _ value: String) {
        if key.bytesEqual(ObjectMetadata.downloadTokensKey) {
            tokens = value.bytesSplit(separator: UInt8(ascii: ","))
            return
        }
        // identity-ok: reads the stored key to compare its bytes
        if let stored = custom.index(forKey: key), !custom[stored].key.bytesEqual(key) { ambiguous = true }
        // identity-ok: the check above makes this key's bytes the only spelling kept
        custom[key] = value
    }

    func metadata(bucket: String) throws(StorageError) -> ObjectMetadata {
        guard let name, let generation else { throw .internalError("GCS object resource without name/generation") }
        guard !ambiguous else { throw .internalError("GCS object resource with ambiguous metadata keys") }
        let created = timeCreated ?? Timestamp(nanosecondsSinceEpoch: 0)
        var metadata = ObjectMetadata(
            bucket: bucket, name: name, generation: generation, metageneration: metageneration ?? 1,
            size: size ?? 0, timeCreated: created, updated: updated ?? created,
            md5Hash: md5Hash, crc32c: crc32c, storageClass: storageClass ?? "STANDARD",
            contentType: contentType, contentEncoding: contentEncoding,
            contentDisposition: contentDisposition, contentLanguage: contentLanguage,
            cacheControl: cacheControl, customMetadata: custom, downloadTokens: tokens, customTime: customTime)
        metadata.timeDeleted = timeDeleted
        return metadata
    }
}
