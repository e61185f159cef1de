import PortcullisCore

/// GCS object resource JSON ↔ `ObjectMetadata`. Download tokens live in the custom metadata key
/// `firebaseStorageDownloadTokens` (comma-separated), exactly as Firebase stores them, so existing buckets work.
enum GCSObjectCoding {
    static func metadata(from json: JSONValue, bucket: String) throws(StorageError) -> ObjectMetadata {
        guard let name = json["name"]?.stringValue,
            let generation = json["generation"]?.stringValue.flatMap({ Int64($0) }) ?? json["generation"]?.int64Value
        else { throw .internalError("GCS object resource without name/generation") }
        func int(_ key: String) -> Int64? { json[key]?.stringValue.flatMap { Int64($0) } ?? json[key]?.int64Value }
        func time(_ key: String) -> Timestamp? { json[key]?.stringValue.flatMap { Timestamp(rfc3339: $0) } }
        func text(_ key: String) -> String? {
            guard let value = json[key]?.stringValue, !value.isEmpty else { return nil }
            return value
        }
        var custom = [String: String]()
        var tokens = [String]()
        for (key, value) in json["metadata"]?.objectValue ?? [:] {
            guard let value = value.stringValue else { continue }
            if key.bytesEqual(ObjectMetadata.downloadTokensKey) {
                tokens = value.bytesSplit(separator: UInt8(ascii: ","))
            } else {
                custom[key] = value
            }
        }
        let created = time("timeCreated") ?? Timestamp(nanosecondsSinceEpoch: 0)
        var metadata = ObjectMetadata(
            bucket: bucket, name: name, generation: generation, metageneration: int("metageneration") ?? 1,
            size: int("size") ?? 0, timeCreated: created, updated: time("updated") ?? created,
            md5Hash: text("md5Hash"), crc32c: text("crc32c"), storageClass: text("storageClass") ?? "STANDARD",
            contentType: text("contentType"), contentEncoding: text("contentEncoding"),
            contentDisposition: text("contentDisposition"), contentLanguage: text("contentLanguage"),
            cacheControl: text("cacheControl"), customMetadata: custom, downloadTokens: tokens,
            customTime: time("customTime"))
        metadata.timeDeleted = time("timeDeleted")
        return metadata
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
