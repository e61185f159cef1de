import PortcullisCore
import StorageClient

/// `cp --header 'NAME: VALUE'` (gsutil's `-h`): the metadata an upload sets. Header names are matched in ASCII
/// lower case, as HTTP does; `x-goog-meta-KEY` sets custom metadata KEY (its case kept).
struct UploadHeaders {
    var contentType: String?
    var cacheControl: String?
    var contentDisposition: String?
    var contentEncoding: String?
    var contentLanguage: String?
    var custom: [(String, String)] = []

    static let customPrefix = "x-goog-meta-"

    /// Parses every `--header` value; an unknown header or one without `:` is a usage error (exit 2).
    static func parse(_ values: [String], spec: CommandSpec) -> UploadHeaders {
        var headers = UploadHeaders()
        for value in values {
            guard let (rawName, rawText) = value.bytesCut(at: UInt8(ascii: ":")), !rawName.isEmpty else {
                CLIExit.usage("cp: --header takes 'NAME: VALUE', not \(value)", command: spec)
            }
            let name = rawName.trimmingSpaces()
            let text = rawText.trimmingSpaces()
            let lower = name.lowercased()
            switch lower {
            case "content-type": headers.contentType = text
            case "cache-control": headers.cacheControl = text
            case "content-disposition": headers.contentDisposition = text
            case "content-encoding": headers.contentEncoding = text
            case "content-language": headers.contentLanguage = text
            default:
                guard lower.hasPrefix(customPrefix), name.utf8.count > customPrefix.utf8.count else {
                    CLIExit.usage(
                        "cp: --header \(name) is not one of Content-Type, Cache-Control, Content-Disposition, "
                            + "Content-Encoding, Content-Language, x-goog-meta-KEY", command: spec)
                }
                headers.custom.append((String(name.dropFirst(customPrefix.count)), text))
            }
        }
        return headers
    }

    /// The metadata for an upload of `name`: the headers given, with Content-Type guessed from the name when
    /// none was.
    func metadata(forName name: String) -> StorageMetadata {
        var metadata = StorageMetadata(contentType: contentType ?? ContentTypeGuess.forName(name))
        metadata.cacheControl = cacheControl
        metadata.contentDisposition = contentDisposition
        metadata.contentEncoding = contentEncoding
        metadata.contentLanguage = contentLanguage
        for (key, value) in custom { metadata.customMetadata[key] = value }
        return metadata
    }
}
