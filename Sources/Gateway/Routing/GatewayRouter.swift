public import HTTPServer

/// Every surface's routes compiled into one router at start-up, and the prefixes each surface answers for.
///
/// Built once from the surfaces' tables; a table that cannot be compiled (a bad template, two routes serving
/// one method on the same paths, two surfaces claiming one prefix) stops the start with the reason.
public struct GatewayRouter: Sendable {
    struct Entry: Sendable {
        let surface: Int
        let handler: RouteHandler
    }

    private let compiled: CompiledRoutes<Entry>
    /// The routes of query-gated surfaces (`SurfaceTraits.queryGate`) and their keys as bytes.
    private let gated: CompiledRoutes<Entry>
    private let gateKeys: [[UInt8]]
    /// Whether a gated surface takes form uploads to a bucket's root.
    private let gatesFormPosts: Bool
    let traits: [SurfaceTraits]
    /// `(prefix bytes, surface index)`, longest first.
    private let prefixes: [(bytes: [UInt8], surface: Int)]

    public init(surfaces: [any APISurface]) throws(RouteTableError) {
        var routes: [Route<Entry>] = []
        var gatedRoutes: [Route<Entry>] = []
        var gateKeys: [[UInt8]] = []
        var gatesFormPosts = false
        var prefixes: [(bytes: [UInt8], surface: Int)] = []
        for (index, surface) in surfaces.enumerated() {
            let isGated = !surface.traits.queryGate.isEmpty || surface.traits.answersFormPosts
            gatesFormPosts = gatesFormPosts || surface.traits.answersFormPosts
            gateKeys += surface.traits.queryGate.map { Array($0.utf8) }
            for route in surface.routes {
                let entry = Route(
                    route.methods, route.template, checkTarget: route.checkTarget,
                    Entry(surface: index, handler: route.handler))
                if isGated { gatedRoutes.append(entry) } else { routes.append(entry) }
            }
            for prefix in surface.traits.prefixes {
                let bytes = Array(prefix.utf8)
                for other in prefixes where Self.covers(other.bytes, bytes) || Self.covers(bytes, other.bytes) {
                    throw .overlappingPrefixes(String(decoding: other.bytes, as: UTF8.self), prefix)
                }
                prefixes.append((bytes, index))
            }
        }
        compiled = try CompiledRoutes(routes)
        gated = try CompiledRoutes(gatedRoutes)
        self.gateKeys = gateKeys
        self.gatesFormPosts = gatesFormPosts
        traits = surfaces.map(\.traits)
        self.prefixes = prefixes.sorted { $0.bytes.count > $1.bytes.count }
    }

    /// Where a request goes.
    public enum Decision: Sendable {
        /// A route serves it: the route's label, the surface's traits, its handler and captures.
        case route(label: String, SurfaceTraits, RouteHandler, RouteMatch)
        /// A route matches the path but serves another method (or the method is OPTIONS: `check` is the route's
        /// target check, run before a preflight is answered).
        case methodNotAllowed(
            label: String, SurfaceTraits, allow: [String], check: (@Sendable () throws -> Void)? = nil)
        /// No route matches; under a surface's prefix, that surface answers (in its shape).
        case notFound(label: String, SurfaceTraits?)
    }

    /// Where a request goes, given its raw query too: a query naming a gate key goes to the gated surfaces'
    /// routes first (a path they do not match falls through to the others).
    /// A `POST` of `multipart/form-data` to `/{bucket}` or `/{bucket}/` goes there first too, when a gated surface
    /// takes form uploads.
    /// `contentType` is read only for a `POST` when a surface takes form uploads (most requests never look it up).
    public func decide(
        _ method: HTTPMethod, path: Substring, query: Substring?, contentType: @autoclosure () -> String? = nil
    ) -> Decision {
        let gatedQuery = query.map { !gateKeys.isEmpty && Self.names($0, anyOf: gateKeys) } ?? false
        if gatedQuery
            || (gatesFormPosts && method == .post && Self.isFormUpload(path: path, contentType: contentType()))
        {
            switch gated.resolve(method, path: path) {
            case .matched(let route, let match):
                return .route(
                    label: route.template.label, traits[route.handler.surface], route.handler.handler, match)
            case .methodNotAllowed(let allow):
                let route = gated.mostSpecific(path: path)!
                return .methodNotAllowed(label: route.template.label, traits[route.handler.surface], allow: allow)
            case .notFound: break
            }
        }
        return decide(method, path: path)
    }

    /// `multipart/form-data` sent to a path of one segment, with or without a trailing `/`.
    private static func isFormUpload(path: Substring, contentType: String?) -> Bool {
        guard let contentType,
            contentType.utf8.count >= 19,
            contentType.utf8.prefix(19).elementsEqual(
                "multipart/form-data".utf8, by: { $0.equalsIgnoringASCIICase($1) })
        else { return false }
        var segments = path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).dropFirst()
        if segments.count == 2, segments.last?.isEmpty == true { segments = segments.dropLast() }
        return segments.count == 1 && segments.first?.isEmpty == false
    }

    /// Whether a raw query has a parameter named (exactly, undecoded) one of `keys`.
    static func names(_ query: Substring, anyOf keys: [[UInt8]]) -> Bool {
        query.withContiguousUTF8 { bytes in
            QueryPieces(bytes).contains { piece in keys.contains { $0.elementsEqual(piece.name) } }
        }
    }

    public func decide(_ method: HTTPMethod, path: Substring) -> Decision {
        switch compiled.resolve(method, path: path) {
        case .matched(let route, let match):
            return .route(
                label: route.template.label, traits[route.handler.surface], route.handler.handler, match)
        case .methodNotAllowed(let allow):
            let route = compiled.mostSpecific(path: path)!
            return .methodNotAllowed(label: route.template.label, traits[route.handler.surface], allow: allow)
        case .notFound:
            return unmatched(path)
        }
    }

    /// An OPTIONS request whose query may name a gate key (a browser's preflight for a signed URL carries the
    /// URL's query): the gated surfaces' routes first, as in `decide(_:path:query:)`.
    public func options(path: Substring, query: Substring?) -> Decision {
        if let query, !gateKeys.isEmpty, Self.names(query, anyOf: gateKeys),
            let (route, _) = gated.mostSpecificMatch(path: path)
        {
            return .methodNotAllowed(
                label: route.template.label, traits[route.handler.surface], allow: route.allowed)
        }
        return options(path: path)
    }

    /// An OPTIONS request: the most specific matching route's `Allow` list, or where it is unmatched.
    public func options(path: Substring) -> Decision {
        guard let (route, match) = compiled.mostSpecificMatch(path: path) else { return unmatched(path) }
        let check = route.checkTarget.map { check in { @Sendable () throws in try check(match) } }
        return .methodNotAllowed(
            label: route.template.label, traits[route.handler.surface], allow: route.allowed, check: check)
    }

    private func unmatched(_ path: Substring) -> Decision {
        for (bytes, surface) in prefixes where Self.covers(bytes, path.utf8) {
            return .notFound(label: String(decoding: bytes, as: UTF8.self) + "/unmatched", traits[surface])
        }
        return .notFound(label: "unmatched", nil)
    }

    /// Whether `path` is `prefix` or lies under it (`prefix/…`), by bytes.
    private static func covers(_ prefix: [UInt8], _ path: some Collection<UInt8>) -> Bool {
        guard path.starts(with: prefix) else { return false }
        return path.count == prefix.count || path.dropFirst(prefix.count).first == UInt8(ascii: "/")
    }
}
