import Foundation
import PortcullisCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension StorageReference {
    /// Copies this object to `destination` on the server, between any two buckets it serves, through the Cloud
    /// Storage JSON API's `rewriteTo` (Firebase's SDKs have no copy call). The bytes never pass through the
    /// client, so they are copied exactly as stored (a gzip-encoded object stays compressed), with the source's
    /// metadata; download tokens travel only when the caller may set them (the admin). A large copy between
    /// backends may take several calls: each answer's `rewriteToken` is passed back until `done`. With
    /// `ifSourceGeneration`, the copy fails (HTTP 412) unless the source is still that generation. Returns the
    /// copy's metadata as `getMetadata()` reads it.
    public func copy(to destination: StorageReference, ifSourceGeneration: Int64? = nil) async throws(StorageError)
        -> StorageMetadata
    {
        let base =
            storage.baseURL + "/storage/v1/b/" + Storage.encode(bucket) + "/o/" + Storage.encode(fullPath)
            + "/rewriteTo/b/" + Storage.encode(destination.bucket) + "/o/" + Storage.encode(destination.fullPath)
        var rewriteToken: String? = nil
        while true {
            var query: [String] = []
            if let ifSourceGeneration { query.append("ifSourceGenerationMatch=\(ifSourceGeneration)") }
            if let rewriteToken { query.append("rewriteToken=" + Storage.encode(rewriteToken)) }
            let text = base + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
            guard let url = URL(string: text) else { throw StorageError(.invalidArgument, "Invalid copy URL \(text)") }
            let request = try await storage.request("POST", url)
            let (_, data) = try await storage.perform(request)
            guard let json = try? JSONValue.parse(Array(data)) else {
                throw StorageError(.unknown, "Invalid rewrite answer from the server.")
            }
            if json["done"]?.boolValue == true { break }
            guard let next = json["rewriteToken"]?.stringValue, !next.isEmpty else {
                throw StorageError(.unknown, "The server's rewrite answer is neither done nor resumable.")
            }
            rewriteToken = next
        }
        return try await destination.getMetadata()
    }
}
