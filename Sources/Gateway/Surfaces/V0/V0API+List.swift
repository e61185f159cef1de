import HTTPServer
import PortcullisCore
import Service

/// List: items and prefixes as one paginated stream, with a sealed `nextPageToken`.
extension V0API {
    func list(_ call: V0Call, bucket: String) async throws -> HTTPResponse {
        let prefix = call.query["prefix"] ?? ""
        guard prefix.isEmpty || prefix.bytesHasSuffix("/") else {
            throw ServiceError.badRequest(
                "The prefix parameter is required to be empty or ends with a single / character.")
        }
        let delimiter: String?
        switch call.query["delimiter"] {
        case nil, ""?: delimiter = nil
        case "/"?: delimiter = "/"
        default: throw ServiceError.badRequest("Only \"/\" is supported as a delimiter.")
        }
        var maxResults = StorageService.maxPageSize
        if let text = call.query["maxResults"] {
            guard let value = Int(text), (1...StorageService.maxPageSize).contains(value) else {
                throw ServiceError.badRequest("maxResults must be an integer between 1 and 1000 inclusive.")
            }
            maxResults = value
        }
        let page = try await service.list(
            ListQuery(
                bucket: bucket, prefix: prefix, delimiter: delimiter, maxResults: maxResults,
                pageToken: call.query["pageToken"]),
            caller: call.caller, call.context)

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
        if let next = page.nextPageToken {
            out.append(contentsOf: #","nextPageToken":"#.utf8)
            JSONValue.encodeString(next, into: &out)
        }
        out.append(UInt8(ascii: "}"))
        return Self.json(out)
    }
}
