import Crypto
import PortcullisCore

/// The console's files, ready to serve: bytes, content type and a strong `ETag` each, computed once.
///
/// The files come from `Sources/Gateway/Console/Assets`, embedded at build time by the ConsoleAssets plugin
/// (`embeddedFiles`). `index.html` names the others as `static/{{version}}/NAME`; the catalog replaces
/// `{{version}}` with `version`, a digest of every file, so a browser may keep a versioned file for a year
/// (it can never change under that URL) while the page itself is revalidated on every load.
public struct ConsoleAssetCatalog: Sendable {
    /// One servable file.
    public struct Asset: Sendable {
        public let name: String
        public let contentType: String
        public let body: [UInt8]
        /// A strong validator: the quoted hex prefix of the body's SHA-256.
        public let etag: String
    }

    /// The name of the page the console starts from.
    public static let indexName = "index.html"
    static let versionPlaceholder = "{{version}}"

    /// A digest of every file's name and bytes: the path segment that makes static URLs immutable.
    public let version: String
    /// `index.html` with its static URLs pointing at `version`.
    public let index: Asset
    private let table: [ExactString: Asset]

    /// A catalog of `files` (name relative to the assets folder, bytes). `index.html` must be among them.
    public init(files: [(name: String, bytes: [UInt8])]) {
        var digest = SHA256()
        for file in files.sorted(by: { $0.name.bytesLess(than: $1.name) }) {
            digest.update(Array(file.name.utf8) + [0])
            digest.update(SHA256.hash(file.bytes))
        }
        version = HexText.encode(digest.finalize().prefix(8))
        var table: [ExactString: Asset] = [:]
        for file in files {
            table[ExactString(file.name)] = Self.asset(file.name, file.bytes)
        }
        self.table = table
        let page = table[ExactString(Self.indexName)]?.body ?? Array("<!doctype html><title>Portcullis</title>".utf8)
        index = Self.asset(Self.indexName, Self.replacing(Self.versionPlaceholder, with: version, in: page))
    }

    /// The empty element of `index.html` that names the API's base URL when the console has its own origin
    /// (`--console-listen`); left empty, the page calls the APIs beside itself.
    static let apiBaseSlot = #"<meta name="portcullis-api" content="">"#

    /// `index` naming `apiBase` (an absolute URL) as the base of the APIs the page calls.
    public func index(apiBase: String) -> Asset {
        let filled = #"<meta name="portcullis-api" content=""# + MarkupEscaping.escaped(apiBase) + #"">"#
        return Self.asset(Self.indexName, Self.replacing(Self.apiBaseSlot, with: filled, in: index.body))
    }

    /// The file served under `static/{version}/NAME`, if there is one (`index.html` is served only as the page).
    public func asset(named name: Substring) -> Asset? {
        guard !name.utf8.elementsEqual(Self.indexName.utf8) else { return nil }
        return table[ExactString(String(name))]
    }

    /// Every file name, in byte order (for tests and diagnostics).
    public var names: [String] { table.keys.sorted().map(\.string) }  // identity-ok: ExactString orders by bytes

    /// The catalog built into this binary.
    public static let embedded = ConsoleAssetCatalog(
        files: embeddedFiles.map { file in
            (name: file.name, bytes: file.text.withUTF8Buffer { Array($0) })
        })

    static func asset(_ name: String, _ bytes: [UInt8]) -> Asset {
        Asset(
            name: name, contentType: contentType(of: name), body: bytes,
            etag: "\"" + HexText.encode(SHA256.hash(bytes).prefix(16)) + "\"")
    }

    /// The media type served for a file name, by extension.
    static func contentType(of name: String) -> String {
        let ext =
            name.utf8.split(separator: UInt8(ascii: ".")).last.map { String(decoding: $0, as: UTF8.self).lowercased() }
            ?? ""
        switch ext {
        case "html": return "text/html; charset=utf-8"
        case "css": return "text/css; charset=utf-8"
        case "js", "mjs": return "text/javascript; charset=utf-8"
        case "json": return "application/json; charset=utf-8"
        case "svg": return "image/svg+xml"
        case "txt": return "text/plain; charset=utf-8"
        default: return "application/octet-stream"
        }
    }

    /// `bytes` with every occurrence of `token` replaced by `value`.
    static func replacing(_ token: String, with value: String, in bytes: [UInt8]) -> [UInt8] {
        let needle = Array(token.utf8), replacement = Array(value.utf8)
        guard !needle.isEmpty else { return bytes }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            if bytes[i] == needle[0], i + needle.count <= bytes.count,
                bytes[i..<(i + needle.count)].elementsEqual(needle)
            {
                out.append(contentsOf: replacement)
                i += needle.count
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return out
    }
}
