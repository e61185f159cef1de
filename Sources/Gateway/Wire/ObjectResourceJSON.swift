public import PortcullisCore
public import Service

/// The writable fields of an object resource as both surfaces receive them (v0's upload metadata; the JSON API's object
/// resource has the same names): upload metadata (multipart JSON part, resumable start body) and metadata
/// patches. Parsed here once; the service judges what they ask for.
public enum ObjectResourceJSON {
    /// What an upload's JSON metadata (multipart JSON part, resumable start body) asks for.
    public struct UploadFields: Sendable, Equatable {
        public var name: String?
        public var attributes = ObjectAttributes()
        /// A client-declared base64 MD5, checked against the bytes (mismatch → 400, nothing stored).
        public var md5Hash: String?
        /// The declared CRC32C (base64 of the big-endian value), checked against the bytes.
        public var crc32c: String?
        public init() {}
    }

    /// Limits on custom metadata, so one object's metadata stays small (GCS allows 8 KiB in total).
    public static let maxCustomMetadataBytes = 8 * 1024

    /// Decodes upload metadata and the JSON API's object resource (`objects.update`). Tolerates what
    /// the SDKs send (`"bucket": ""`, `"metadata": null`, read-only fields, which are ignored); non-string custom
    /// values are stringified as the emulator does (a `null` value is dropped); `firebaseStorageDownloadTokens`
    /// becomes the object's token list. An empty body is no fields; a body that is JSON but not an object
    /// (`null` included) is 400 (`JSONObjectBody`).
    /// Cloud Storage's storage classes; a resource or parameter naming another is 400, as on GCS.
    public static let storageClasses = [
        "STANDARD", "NEARLINE", "COLDLINE", "ARCHIVE", "MULTI_REGIONAL", "REGIONAL", "DURABLE_REDUCED_AVAILABILITY",
    ]

    /// `text` as an RFC 3339 timestamp (nil stays nil); anything else is 400.
    public static func customTime(_ text: String?) throws(ServiceError) -> Timestamp? {
        guard let text else { return nil }
        guard let time = Timestamp(rfc3339: text) else {
            throw .badRequest("customTime must be an RFC 3339 timestamp: \(text).")
        }
        return time
    }

    /// `text` as a storage class (nil stays nil).
    public static func storageClass(_ text: String?) throws(ServiceError) -> String? {
        guard let text else { return nil }
        guard storageClasses.contains(where: { $0.utf8.elementsEqual(text.utf8) }) else {
            throw .badRequest("Invalid storage class: \(text).")
        }
        return text
    }

    public static func decodeUpload(_ body: [UInt8]) throws(ServiceError) -> UploadFields {
        var fields = UploadFields()
        guard let object = try JSONObjectBody.members(body) else { return fields }
        fields.name = try string(object, "name")
        fields.attributes.contentType = try headerSafe(object, "contentType")
        fields.attributes.contentEncoding = try headerSafe(object, "contentEncoding")
        fields.attributes.contentDisposition = try headerSafe(object, "contentDisposition")
        fields.attributes.contentLanguage = try headerSafe(object, "contentLanguage")
        fields.attributes.cacheControl = try headerSafe(object, "cacheControl")
        fields.attributes.storageClass = try storageClass(try string(object, "storageClass"))
        fields.attributes.customTime = try customTime(try string(object, "customTime"))
        if let md5 = try string(object, "md5Hash"), !md5.isEmpty {
            guard isBase64Digest(md5, byteCount: 16) else {
                throw .badRequest("md5Hash must be the base64 encoding of 16 bytes.")
            }
            fields.md5Hash = md5
        }
        if let crc = try string(object, "crc32c"), !crc.isEmpty {
            guard isBase64Digest(crc, byteCount: 4) else {
                throw .badRequest("crc32c must be the base64 encoding of 4 bytes.")
            }
            fields.crc32c = crc
        }
        if case .object(let custom)? = object["metadata"] {
            for (key, value) in custom {
                let text: String
                switch value {
                case .null: continue
                case .string(let s): text = s
                default: text = value.encoded()
                }
                if key.bytesEqual(ObjectMetadata.downloadTokensKey) {
                    fields.attributes.downloadTokens = splitTokens(text)
                } else {
                    fields.attributes.customMetadata[exactly: key] = text
                }
            }
            try checkCustomSize(fields.attributes.customMetadata)
        }
        return fields
    }

    /// What a patch's `metadata.firebaseStorageDownloadTokens` does: v0 unions the tokens into the list;
    /// on the JSON API it is an ordinary metadata key, so a value replaces the list and `null` removes it.
    public enum TokenPatch: Sendable {
        case union
        case replace
    }

    /// Decodes a PATCH body with v0's PATCH merge semantics: absent = unchanged, `null` = remove, custom keys
    /// merged one by one, `firebaseStorageDownloadTokens` as `tokens` says.
    /// A body that is JSON but not an object (`null`, `[]`, `"x"`, `42`) is 400 and changes nothing
    /// (`JSONObjectBody`); an empty body is an empty patch.
    public static func decodePatch(_ body: [UInt8], tokens: TokenPatch = .union) throws(ServiceError)
        -> MetadataPatch
    {
        var patch = MetadataPatch()
        guard let object = try JSONObjectBody.members(body) else { return patch }
        patch.contentType = try fieldPatch(object, "contentType")
        patch.contentEncoding = try fieldPatch(object, "contentEncoding")
        patch.contentDisposition = try fieldPatch(object, "contentDisposition")
        patch.contentLanguage = try fieldPatch(object, "contentLanguage")
        patch.cacheControl = try fieldPatch(object, "cacheControl")
        switch object["customTime"] {
        case nil: break
        case .null?: patch.customTime = .remove
        case .string(let text)?: patch.customTime = .set(try customTime(text)!)
        default: throw .badRequest("customTime must be an RFC 3339 timestamp.")
        }
        switch object["metadata"] {
        case nil: break
        case .null?: patch.clearCustomMetadata = true
        case .object(let custom)?:
            var size = 0
            for (key, value) in custom {
                let text: String?
                switch value {
                case .null: text = nil
                case .string(let s): text = s
                default: text = value.encoded()
                }
                if key.bytesEqual(ObjectMetadata.downloadTokensKey) {
                    switch tokens {
                    case .union: if let text { patch.addDownloadTokens = splitTokens(text) }
                    case .replace: patch.replaceDownloadTokens = text.map(splitTokens) ?? []
                    }
                    continue
                }
                size += key.utf8.count + (text?.utf8.count ?? 0)
                patch.customMetadata[exactly: key] = .some(text)
            }
            guard size <= maxCustomMetadataBytes else {
                throw .badRequest("Custom metadata exceeds \(maxCustomMetadataBytes) bytes.")
            }
        default:
            throw .badRequest("metadata must be an object of strings or null.")
        }
        return patch
    }

    // MARK: - helpers

    static func string(_ object: [String: JSONValue], _ key: String) throws(ServiceError) -> String? {
        switch object[key] {
        case nil, .null?: return nil
        case .string(let s)?: return s
        default: throw .badRequest("\(key) must be a string.")
        }
    }

    /// A field that is later sent as a response header: control characters would break the header block.
    static func headerSafe(_ object: [String: JSONValue], _ key: String) throws(ServiceError) -> String? {
        guard let value = try string(object, key) else { return nil }
        try checkHeaderSafe(value, key)
        return value
    }

    /// Longest value (in Unicode code points, as JSON Schema's `maxLength` counts) of a field sent back as a
    /// response header.
    public static let maxHeaderFieldLength = 1024

    static func checkHeaderSafe(_ value: String, _ key: String) throws(ServiceError) {
        guard value.unicodeScalars.count <= maxHeaderFieldLength,
            !value.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F })
        else {
            throw .badRequest("\(key) must be at most \(maxHeaderFieldLength) characters without control characters.")
        }
    }

    static func fieldPatch(_ object: [String: JSONValue], _ key: String) throws(ServiceError) -> FieldPatch<String> {
        switch object[key] {
        case nil: return .unchanged
        case .null?: return .remove
        case .string(let s)?:
            try checkHeaderSafe(s, key)
            return .set(s)
        default: throw .badRequest("\(key) must be a string or null.")
        }
    }

    static func checkCustomSize(_ custom: [String: String]) throws(ServiceError) {
        let size = custom.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
        guard size <= maxCustomMetadataBytes else {
            throw .badRequest("Custom metadata exceeds \(maxCustomMetadataBytes) bytes.")
        }
    }

    /// `a, b,,c` → `["a","b","c"]`.
    public static func splitTokens(_ text: String) -> [String] {
        var tokens: [String] = []
        for part in text.bytesSplit(separator: UInt8(ascii: ",")) {
            let token = part.trimmingSpaces()
            if !token.isEmpty, !tokens.containsBytes(token) { tokens.append(token) }
        }
        return tokens
    }

    /// Whether `s` is the padded base64 of a digest of `byteCount` bytes (16: MD5, 4: CRC32C — both end `==`).
    static func isBase64Digest(_ s: String, byteCount: Int) -> Bool {
        let b = Array(s.utf8)
        let length = (byteCount + 2) / 3 * 4
        let padding = (3 - byteCount % 3) % 3
        guard b.count == length, b[(length - padding)...].allSatisfy({ $0 == UInt8(ascii: "=") }) else {
            return false
        }
        return b[..<(length - padding)].allSatisfy { c in
            (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c == 43 || c == 47
        }
    }
}
