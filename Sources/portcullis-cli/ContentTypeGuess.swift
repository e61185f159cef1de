import PortcullisCore

/// The Content-Type an upload gets from its file name when the command line names none, as `gsutil cp` and
/// `aws s3 cp` guess it: a small table of common extensions (compared in ASCII lower case), else
/// `application/octet-stream`. Kept small on purpose: a wrong guess is worse than the generic type.
enum ContentTypeGuess {
    static let fallback = "application/octet-stream"

    static let byExtension: [String: String] = [
        "txt": "text/plain", "log": "text/plain", "md": "text/markdown", "csv": "text/csv",
        "html": "text/html", "htm": "text/html", "css": "text/css", "js": "text/javascript",
        "mjs": "text/javascript", "json": "application/json", "xml": "application/xml",
        "yaml": "application/yaml", "yml": "application/yaml", "pdf": "application/pdf",
        "zip": "application/zip", "gz": "application/gzip", "tgz": "application/gzip", "tar": "application/x-tar",
        "wasm": "application/wasm", "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg",
        "gif": "image/gif", "webp": "image/webp", "svg": "image/svg+xml", "ico": "image/vnd.microsoft.icon",
        "avif": "image/avif", "heic": "image/heic", "mp3": "audio/mpeg", "wav": "audio/wav", "ogg": "audio/ogg",
        "mp4": "video/mp4", "webm": "video/webm", "mov": "video/quicktime", "woff": "font/woff",
        "woff2": "font/woff2", "ttf": "font/ttf",
    ]

    /// The type for `name` (a path or object name): its last extension looked up in the table.
    static func forName(_ name: String) -> String {
        let last = name.bytesSplit(separator: UInt8(ascii: "/")).last ?? name
        guard let (stem, ext) = last.bytesCut(at: UInt8(ascii: "."), last: true), !stem.isEmpty else { return fallback }
        return byExtension[ext.lowercased()] ?? fallback
    }
}
