import HTTPServer
import PortcullisCore
import Storage

/// List (§5.6): items and prefixes as one paginated stream, with a sealed `nextPageToken`.
extension V0API {
    static let defaultPageSize = 1000

    func list(_ call: V0Call, bucket: String) async throws -> HTTPResponse {
        let backend = try backend(bucket)
        let prefix = call.query["prefix"] ?? ""
        guard prefix.isEmpty || prefix.hasSuffix("/") else {
            throw GatewayError.badRequest("The prefix parameter is required to be empty or ends with a single / character.")
        }
        let delimiter: String?
        switch call.query["delimiter"] {
        case nil, ""?: delimiter = nil
        case "/"?: delimiter = "/"
        default: throw GatewayError.badRequest("Only \"/\" is supported as a delimiter.")
        }
        var maxResults = Self.defaultPageSize
        if let text = call.query["maxResults"] {
            guard let value = Int(text), (1...1000).contains(value) else {
                throw GatewayError.badRequest("maxResults must be an integer between 1 and 1000 inclusive.")
            }
            maxResults = value
        }
        var folder = Substring(prefix)
        while folder.hasSuffix("/") { folder = folder.dropLast() }
        try authorize(call, .list, bucket: bucket, path: String(folder), principal: call.principal, resource: nil,
                      delimiter: delimiter)

        var cursor: String?
        if let token = call.query["pageToken"], !token.isEmpty {
            do {
                cursor = try ListCursor.open(signer, token: token, bucket: bucket, prefix: prefix, delimiter: delimiter)
            } catch {
                throw GatewayError.badRequest("Invalid pageToken: \(GatewayError(error).message)")
            }
        }
        let request = ListRequest(bucket: bucket, prefix: prefix, delimiter: delimiter, maxResults: maxResults,
                                  cursor: cursor)
        let page = try await storage(call) { try await backend.list(request) }

        var out = Array(#"{"prefixes":["#.utf8)
        for (i, p) in page.prefixes.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            JSONValue.encodeString(p, into: &out)
        }
        out.append(contentsOf: #"],"items":["#.utf8)
        for (i, name) in page.items.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: #"{"name":"#.utf8)
            JSONValue.encodeString(name, into: &out)
            out.append(contentsOf: #","bucket":"#.utf8)
            JSONValue.encodeString(bucket, into: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "]"))
        if let next = page.nextCursor {
            out.append(contentsOf: #","nextPageToken":"#.utf8)
            JSONValue.encodeString(ListCursor.seal(signer, bucket: bucket, prefix: prefix, delimiter: delimiter,
                                                   cursor: next), into: &out)
        }
        out.append(UInt8(ascii: "}"))
        return Self.json(out)
    }
}
