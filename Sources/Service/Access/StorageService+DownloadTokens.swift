import PortcullisCore
import Rules

/// Download tokens are read capabilities: whoever holds one reads the object's bytes without credentials.
/// So only the server mints them (a first read, an upload that asks for one, the admin's `create_token`), only
/// the admin chooses or removes them, and only a caller who may read an object is shown them.
///
/// Every write path passes the client's attributes or patch through `ownTokens(…)` before anything else sees
/// them, and every metadata a write returns through `revealed(…)`. Change events are not filtered: they go to
/// the operator's webhooks.
extension StorageService {
    /// Attributes an upload, copy or compose may commit for `principal`: an end user's
    /// `firebaseStorageDownloadTokens` is ignored (the server mints what the object gets), and a custom key that
    /// differs from it only in letter case is dropped for everyone — S3 folds metadata keys to lower case, where
    /// it would become the token list.
    static func ownTokens(_ attributes: ObjectAttributes, for principal: Principal?) -> ObjectAttributes {
        var a = attributes
        if principal?.isAdmin != true { a.downloadTokens = [] }
        a.customMetadata = a.customMetadata.filter { !isTokenKeyVariant($0.key) }
        return a
    }

    /// A metadata change as `principal` may make it: the token fields of an end user's patch are ignored, and
    /// custom keys that only differ from the token key in letter case are dropped.
    static func ownTokens(_ update: MetadataUpdate, for principal: Principal?) -> MetadataUpdate {
        switch update {
        case .replace(let attributes):
            return .replace(ownTokens(attributes, for: principal))
        case .merge(var patch):
            if principal?.isAdmin != true {
                patch.addDownloadTokens = []
                patch.removeDownloadTokens = []
                patch.replaceDownloadTokens = nil
            }
            patch.customMetadata = patch.customMetadata.filter { !isTokenKeyVariant($0.key) }
            return .merge(patch)
        }
    }

    /// A key equal to `firebaseStorageDownloadTokens` in ASCII letter case but not byte for byte.
    static func isTokenKeyVariant(_ key: String) -> Bool {
        let tokenKey = ObjectMetadata.downloadTokensKey.utf8
        guard key.utf8.count == tokenKey.count, !key.bytesEqual(ObjectMetadata.downloadTokensKey) else {
            return false
        }
        return zip(key.utf8, tokenKey).allSatisfy { Self.asciiLower($0) == Self.asciiLower($1) }
    }

    private static func asciiLower(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }

    /// `meta` as a write's answer shows it to `principal`: with its download tokens only when the caller may
    /// read the object (admin, or rules `get` judged on it now). The judgment is not counted as a decision:
    /// the request's decision is the write's.
    func revealed(_ meta: ObjectMetadata, to principal: Principal?) -> ObjectMetadata {
        guard !meta.downloadTokens.isEmpty, principal?.isAdmin != true else { return meta }
        let read = judge(
            RulesRequest(
                method: .get, bucket: meta.bucket, path: meta.name, auth: principal, time: .now(),
                resource: meta))
        return read.allowed ? meta : Self.withoutTokens(meta)
    }

    static func withoutTokens(_ meta: ObjectMetadata) -> ObjectMetadata {
        guard !meta.downloadTokens.isEmpty else { return meta }
        var stripped = meta
        stripped.downloadTokens = []
        return stripped
    }
}
