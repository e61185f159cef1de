import HTTPServer
import PortcullisCore
import Service

/// The web console (`--console on`): the static files of a browser app at `/console/`, served from the
/// binary. It holds no data and decides nothing: the app signs in with the caller's own credentials and works
/// only through the gateway's public APIs (v0, the JSON API, the rules explain endpoint), so it can do
/// nothing its user could not do with curl.
///
/// Routes: `GET /console` → 308 to `/console/`; `GET /console/` (or `/console/index.html`) → the page, revalidated
/// on every load; `GET /console/static/{version}/{file}` → a file, immutable for a year when `{version}` is the
/// catalog's (any other version gets the current file, revalidated, so a page from an older instance behind the
/// same load balancer still loads). Every answer carries `ConsoleHeaders`. GET and HEAD only.
///
/// With `api` `.separate` (`--console-listen`), the surface runs on a listener of its own — its own origin, so
/// no object the gateway serves shares an origin with the credential the page keeps — and the page names the
/// API's base URL and allows it in its Content-Security-Policy.
public struct ConsoleSurface: APISurface {
    public static let root = "/console"
    public static let pageTemplate = "/console/"
    public static let staticTemplate = "/console/static/{version}/{file}"

    public let catalog: ConsoleAssetCatalog
    public let api: ConsoleAPILocation
    public let traits = SurfaceTraits(
        errorShape: ConsoleErrorShape(), prefixes: [ConsoleSurface.root], notFoundMessage: "No such console page.")

    public init(catalog: ConsoleAssetCatalog = .embedded, api: ConsoleAPILocation = .sameOrigin) {
        self.catalog = catalog
        self.api = api
    }

    public var routes: [Route<RouteHandler>] {
        [
            Route([.get], RouteTemplate(static: Self.root)) { _ in Self.redirect() },
            Route([.get], RouteTemplate(static: Self.pageTemplate)) { [self] in page($0.request) },
            Route([.get], RouteTemplate(static: "/console/index.html")) { [self] in page($0.request) },
            Route([.get], RouteTemplate(static: "/console/static/{version}/{file...}")) { [self] in file($0) },
        ]
    }

    /// `/console` → `console/`: relative, so the console also works behind a proxy that mounts the gateway
    /// under a path.
    static func redirect() -> HTTPResponse {
        var response = HTTPResponse(status: 308)
        response.headers.add("Location", "console/")
        ConsoleHeaders.apply(to: &response.headers)
        return response
    }

    func page(_ request: HTTPRequest) -> HTTPResponse {
        guard let base = api.baseURL(host: request.headers["Host"]) else {
            return Self.serve(catalog.index, cacheControl: ConsoleHeaders.revalidate, request)
        }
        var response = Self.serve(catalog.index(apiBase: base), cacheControl: ConsoleHeaders.revalidate, request)
        response.headers.set(
            "Content-Security-Policy", ConsoleHeaders.policy(apiOrigin: ConsoleAPILocation.origin(of: base)))
        return response
    }

    /// A file of the catalog (raw: console file names need no percent-decoding).
    func file(_ matched: MatchedRequest) -> HTTPResponse {
        let version = matched.match.captures[0]
        let name = matched.match.captures[1]
        let parts = name.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        let isDotSegment = { (part: Substring.UTF8View.SubSequence) in
            part.elementsEqual(".".utf8) || part.elementsEqual("..".utf8)
        }
        guard !version.isEmpty, parts.allSatisfy({ !$0.isEmpty && !isDotSegment($0) }) else {
            return traits.errorShape.response(
                for: .notFound(traits.notFoundMessage), requestID: matched.record.requestID)
        }
        guard let asset = catalog.asset(named: name) else {
            return traits.errorShape.response(
                for: .notFound("No such console file."), requestID: matched.record.requestID)
        }
        let current = version.utf8.elementsEqual(catalog.version.utf8)
        return Self.serve(
            asset, cacheControl: current ? ConsoleHeaders.immutable : ConsoleHeaders.revalidate, matched.request)
    }

    /// A file, or 304 when the caller's `If-None-Match` names its current `ETag`.
    static func serve(_ asset: ConsoleAssetCatalog.Asset, cacheControl: String, _ request: HTTPRequest) -> HTTPResponse
    {
        var headers = HTTPHeaders()
        headers.add("ETag", asset.etag)
        headers.add("Cache-Control", cacheControl)
        ConsoleHeaders.apply(to: &headers)
        if let header = request.headers["If-None-Match"], Self.names(EntityTagList(parsing: header), asset.etag) {
            return HTTPResponse(status: 304, headers: headers)
        }
        headers.add("Content-Type", asset.contentType)
        return HTTPResponse(status: 200, headers: headers, body: .bytes(asset.body))
    }

    /// Whether an `If-None-Match` list names `etag` (compared weakly, RFC 9110 §13.1.2).
    static func names(_ list: EntityTagList, _ etag: String) -> Bool {
        list.any || list.tags.contains { $0.tag.bytesEqual(etag) }
    }
}

/// Console errors: the gateway's plain JSON error, with the console's security headers.
struct ConsoleErrorShape: ErrorShape {
    func response(for error: ServiceError, requestID: String?) -> HTTPResponse {
        var response = PlainErrorShape().response(for: error, requestID: requestID)
        response.headers.add("Cache-Control", "no-store")
        ConsoleHeaders.apply(to: &response.headers)
        return response
    }
}
