public import HTTPServer

/// One route: the methods it serves, its path template, and what its surface does with a match. A reference:
/// the router hands a matched route to the pipeline on every request, and that hand-off is one retain.
public final class Route<Handler: Sendable>: Sendable {
    /// Checks what a route's captures address before a preflight is answered (an unknown bucket, an invalid
    /// object name): the error it throws is the preflight's answer, in the surface's shape.
    public typealias TargetCheck = @Sendable (RouteMatch) throws -> Void

    public let methods: [HTTPMethod]
    public let template: RouteTemplate
    public let handler: Handler
    public let checkTarget: TargetCheck?

    public init(_ methods: [HTTPMethod], _ template: RouteTemplate, checkTarget: TargetCheck? = nil, _ handler: Handler)
    {
        self.methods = methods
        self.template = template
        self.handler = handler
        self.checkTarget = checkTarget
    }

    /// Whether the route serves `method`. A route serving GET serves HEAD too: a HEAD is the GET of its route
    /// (`HTTPRequest.isHead` tells a reader to open no bytes), and `GatewayResponder.stripForHead` drops
    /// whatever body a handler still made.
    func serves(_ method: HTTPMethod) -> Bool {
        methods.contains(method) || (method == .head && methods.contains(.get))
    }

    /// The `Allow` list: what the route serves, HEAD with GET, and OPTIONS (the pipeline answers it).
    var allowed: [String] {
        var names = methods.map(\.rawValue)
        if let get = methods.firstIndex(of: .get), !methods.contains(.head) { names.insert("HEAD", at: get + 1) }
        if !methods.contains(.options) { names.append("OPTIONS") }
        return names
    }
}

/// The captures of a matched route, in the order of its template (the raw bytes of the path: decoding is the
/// route's decoder's job).
public struct RouteMatch: Sendable {
    /// The template's capture names, by position.
    let names: [String]
    public let captures: [Substring]

    public init(template: RouteTemplate, captures: [Substring]) {
        self.names = template.captureNames
        self.captures = captures
    }

    /// The capture named `name` in the template.
    public subscript(_ name: String) -> Substring? {
        guard let index = names.firstIndex(where: { $0.utf8.elementsEqual(name.utf8) }) else { return nil }
        return captures[index]
    }
}

/// Routes compiled once, at start-up, into a trie of path segments.
///
/// A path can match several templates (`/o/{object...}` and `/o/{object}/compose`); the most specific one that
/// serves the method wins, segment by segment: a literal before a `{capture}`, a capture before a `{rest...}`.
/// That order is the trie's walk order, so the first match found that serves the method is the answer, with no
/// sorting. Templates of the same shape that serve a common method cannot both exist: building refuses them
/// (`RouteTableError.overlap`), so no answer depends on registration order.
public struct CompiledRoutes<Handler: Sendable>: Sendable {
    /// A trie node while the table is built.
    private struct BuildNode {
        var literals: [(start: Int, end: Int, child: Int)] = []
        var capture: Int?
        var ends: [Int] = []
        var rests: [Int] = []
    }

    /// A trie node as walked: ranges into the flat arrays below, all trivial values, so a walk compares path
    /// segments without retaining anything per node or per child.
    private struct Node: Sendable {
        var literals: Range<Int>
        var capture: Int
        var ends: Range<Int>
        var rests: Range<Int>
    }

    public let routes: [Route<Handler>]
    private let nodes: [Node]
    /// Literal children of every node, each a byte range of `literalBytes` and the child node.
    private let edges: [(start: Int, end: Int, child: Int)]
    /// Every literal segment of every template, back to back.
    private let literalBytes: [UInt8]
    /// Route indexes the nodes' `ends` and `rests` ranges point into.
    private let routeIndexes: [Int]

    /// A table written in the code: a table that does not compile is a programming error.
    public init(static routes: [Route<Handler>]) {
        do { self = try CompiledRoutes(routes) } catch { preconditionFailure("\(error)") }
    }

    public init(_ routes: [Route<Handler>]) throws(RouteTableError) {
        for (i, a) in routes.enumerated() {
            for b in routes[(i + 1)...] where a.template.hasSameShape(as: b.template) {
                if let method = a.methods.first(where: { b.serves($0) }) ?? b.methods.first(where: { a.serves($0) }) {
                    throw .overlap(a.template.label, b.template.label, method: method.rawValue)
                }
            }
        }
        var built = [BuildNode()]
        var pool: [UInt8] = []
        for (index, route) in routes.enumerated() {
            var current = 0
            for segment in route.template.segments {
                switch segment {
                case .literal(let bytes):
                    let existing = built[current].literals.first { pool[$0.start..<$0.end].elementsEqual(bytes) }
                    if let child = existing?.child {
                        current = child
                    } else {
                        built.append(BuildNode())
                        built[current].literals.append((pool.count, pool.count + bytes.count, built.count - 1))
                        pool.append(contentsOf: bytes)
                        current = built.count - 1
                    }
                case .capture:
                    if let child = built[current].capture {
                        current = child
                    } else {
                        built.append(BuildNode())
                        built[current].capture = built.count - 1
                        current = built.count - 1
                    }
                case .rest:
                    built[current].rests.append(index)
                    current = -1
                }
                if current < 0 { break }
            }
            if current >= 0 { built[current].ends.append(index) }
        }
        var edges: [(start: Int, end: Int, child: Int)] = []
        var routeIndexes: [Int] = []
        self.nodes = built.map { node in
            let literals = edges.count..<(edges.count + node.literals.count)
            edges.append(contentsOf: node.literals)
            let ends = routeIndexes.count..<(routeIndexes.count + node.ends.count)
            routeIndexes.append(contentsOf: node.ends)
            let rests = routeIndexes.count..<(routeIndexes.count + node.rests.count)
            routeIndexes.append(contentsOf: node.rests)
            return Node(literals: literals, capture: node.capture ?? -1, ends: ends, rests: rests)
        }
        self.routes = routes
        self.edges = edges
        self.literalBytes = pool
        self.routeIndexes = routeIndexes
    }

    /// How a request's method and path resolve.
    public enum Resolution: Sendable {
        case matched(Route<Handler>, RouteMatch)
        /// Some route matches the path, none serves the method: 405 with the most specific route's `Allow`.
        case methodNotAllowed(allow: [String])
        case notFound
    }

    public func resolve(_ method: HTTPMethod, path: Substring) -> Resolution {
        var first: Int?
        var chosen: (Int, [Substring])?
        walk(path) { index, captures in
            if first == nil { first = index }
            guard routes[index].serves(method) else { return false }
            chosen = (index, captures)
            return true
        }
        if let (index, captures) = chosen {
            return .matched(routes[index], RouteMatch(template: routes[index].template, captures: captures))
        }
        if let first { return .methodNotAllowed(allow: routes[first].allowed) }
        return .notFound
    }

    /// The most specific route matching `path` whatever the method (its label names an exchange the route
    /// table refused, e.g. a 405).
    public func mostSpecific(path: Substring) -> Route<Handler>? { mostSpecificMatch(path: path)?.0 }

    /// The most specific route matching `path` whatever the method, with its captures.
    public func mostSpecificMatch(path: Substring) -> (Route<Handler>, RouteMatch)? {
        var found: (Int, [Substring])?
        walk(path) { index, captures in
            found = (index, captures)
            return true
        }
        return found.map { (routes[$0.0], RouteMatch(template: routes[$0.0].template, captures: $0.1)) }
    }

    /// Visits the routes matching `path`, most specific first, until `visit` returns true. Paths are split on
    /// the `/` byte (never on `Character`s: a `/` followed by a combining mark is one `Character`).
    private func walk(_ path: Substring, _ visit: (Int, [Substring]) -> Bool) {
        let utf8 = path.utf8
        guard utf8.first == UInt8(ascii: "/") else { return }
        withoutActuallyEscaping(visit) { visit in
            nodes.withUnsafeBufferPointer { nodes in
                edges.withUnsafeBufferPointer { edges in
                    literalBytes.withUnsafeBufferPointer { pool in
                        routeIndexes.withUnsafeBufferPointer { routeIndexes in
                            var walk = Walk(
                                nodes: nodes, edges: edges, pool: pool, routeIndexes: routeIndexes, path: path,
                                captures: [], visit: visit)
                            walk.captures.reserveCapacity(4)  // a few captures: one allocation, no regrowth
                            _ = walk.descend(0, from: utf8.index(after: utf8.startIndex))
                        }
                    }
                }
            }
        }
    }

    /// One walk's state: the trie's flat arrays as buffers.
    private struct Walk {
        let nodes: UnsafeBufferPointer<Node>
        let edges: UnsafeBufferPointer<(start: Int, end: Int, child: Int)>
        let pool: UnsafeBufferPointer<UInt8>
        let routeIndexes: UnsafeBufferPointer<Int>
        let path: Substring
        var captures: [Substring]
        let visit: (Int, [Substring]) -> Bool

        /// Matches the segment starting at `start` (just after a `/`) against `node`'s children.
        mutating func descend(_ node: Int, from start: String.Index) -> Bool {
            let utf8 = path.utf8
            var end = start
            while end != utf8.endIndex, utf8[end] != UInt8(ascii: "/") { end = utf8.index(after: end) }
            let atLast = end == utf8.endIndex
            let segment = utf8[start..<end]
            let here = nodes[node]
            for edge in here.literals {
                let literal = edges[edge]
                guard segment.elementsEqual(UnsafeBufferPointer(rebasing: pool[literal.start..<literal.end])) else {
                    continue
                }
                if step(literal.child, atLast: atLast, after: end) { return true }
            }
            if here.capture >= 0 {
                captures.append(path[start..<end])
                if step(here.capture, atLast: atLast, after: end) { return true }
                captures.removeLast()
            }
            for i in here.rests {
                captures.append(path[start...])
                if visit(routeIndexes[i], captures) { return true }
                captures.removeLast()
            }
            return false
        }

        private mutating func step(_ child: Int, atLast: Bool, after end: String.Index) -> Bool {
            if atLast {
                // The path ends here: only templates ending here match (`/o` is not `/o/{object...}`, whose rest
                // starts after a `/` this path lacks).
                for i in nodes[child].ends where visit(routeIndexes[i], captures) { return true }
                return false
            }
            return descend(child, from: path.utf8.index(after: end))
        }
    }
}
