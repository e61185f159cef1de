/// The S3 surface's options (docs/s3-api.md, docs/configuration.md). Kept in their own file so the option lists
/// that other features extend stay small to merge.
extension ConfigurationOption {
    public static let s3Listen = ConfigurationOption(
        flag: "s3-listen", valueName: "HOST:PORT", environment: "PORTCULLIS_S3_LISTEN", defaultText: nil,
        summary:
            "Serve the S3 API (SigV4; path-style, and virtual-host style with `--s3-domain`) at the root of this address, over the same buckets, objects and rules. Off when absent."
    )
    public static let s3Domain = ConfigurationOption(
        flag: "s3-domain", valueName: "DOMAIN", environment: "PORTCULLIS_S3_DOMAIN", defaultText: nil,
        summary:
            "Host name under which `BUCKET.DOMAIN` addresses a bucket virtual-host style on `--s3-listen`; without it only path-style (`/BUCKET/KEY`) is served."
    )
    public static let s3Keys = ConfigurationOption(
        flag: "s3-keys", valueName: "FILE", environment: "PORTCULLIS_S3_KEYS", defaultText: nil,
        summary:
            "JSON access keys for the S3 API: `{\"keys\":[{\"id\",\"secret\",\"admin\":true} | {\"id\",\"secret\",\"uid\",\"claims\":{…}}]}`; reloaded on SIGHUP (an invalid new file keeps the old keys). Without it only session tokens (a user's JWT) and anonymous requests are served."
    )
    public static let s3Region = ConfigurationOption(
        flag: "s3-region", valueName: "REGION", environment: "PORTCULLIS_S3_REGION", defaultText: "us-east-1",
        summary:
            "The region GetBucketLocation and HeadBucket report. Signatures are accepted for any region named in their credential scope."
    )
}
