/// The v0 surface's own settings (docs/configuration.md). Built by the executable.
public struct V0Configuration: Sendable {
    /// External base URL (`--public-url`) for upload and download URLs; nil → `http://{Host header}`.
    public var publicURL: String?

    public init(publicURL: String? = nil) {
        self.publicURL = publicURL
    }
}
