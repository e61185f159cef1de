/// `--bucket-root file:DIR`: where the admin may create buckets through the JSON API (docs/configuration.md). Kept in its own
/// file so the option lists that other features extend stay small to merge.
extension ConfigurationOption {
    public static let bucketRoot = ConfigurationOption(
        flag: "bucket-root", valueName: "file:DIR", environment: "PORTCULLIS_BUCKET_ROOT", defaultText: nil,
        summary:
            "Let the admin create, change and delete buckets through the JSON API (`POST /storage/v1/b`); they are embedded buckets in DIR and survive restarts. `--bucket` buckets stay configuration. Unset: buckets are configuration only."
    )
}

extension ConfigurationParser {
    /// `file:DIR` (the only kind of bucket the API can create).
    static func parseBucketRoot(_ text: String) -> Result<String, ReasonText> {
        guard text.bytesHasPrefix("file:"), text.utf8.count > 5 else { return .failure("expected file:DIR") }
        return .success(String(text.dropFirst(5)))
    }
}
