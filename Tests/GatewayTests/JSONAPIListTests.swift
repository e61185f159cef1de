import Foundation
import HTTPServer
import PortcullisCore
import Rules
import Storage
import Testing

@testable import Gateway
@testable import Service

/// The JSON API's listings, bucket resources, routes and error shape, in-process.
@Suite struct JSONAPIListTests {
    @Test func listShowsItemsAsResourcesAndPrefixesAndPages() async throws {
        let h = try JSONHarness()
        for name in ["d/a", "d/b", "d/sub/c", "d//hidden-on-v0", "d/dir/", "e"] { try await h.put(name, [7]) }
        let r = try await h.send("GET", "/storage/v1/b/default-bucket/o?prefix=d/&delimiter=/")
        #expect(r.status == 200)
        let page = try #require(r.json)
        #expect(page["kind"]?.stringValue == "storage#objects")
        #expect(page["items"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["d/a", "d/b"])
        #expect(page["items"]?.arrayValue?.first?["size"]?.stringValue == "1")
        #expect(page["prefixes"]?.arrayValue?.compactMap(\.stringValue) == ["d//", "d/dir/", "d/sub/"])
        #expect(page["nextPageToken"] == nil)
        // Paging with our sealed token; the token is bound to the listing's shape.
        var names: [String] = []
        var token: String?
        repeat {
            var target = "/storage/v1/b/default-bucket/o?maxResults=2"
            if let token { target += "&pageToken=" + PercentEncoding.uriComponent.encode(token) }
            let p = try #require(try await h.send("GET", target).json)
            names += p["items"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
            token = p["nextPageToken"]?.stringValue
        } while token != nil
        #expect(names == ["d//hidden-on-v0", "d/a", "d/b", "d/dir/", "d/sub/c", "e"])
        let first = try #require(try await h.send("GET", "/storage/v1/b/default-bucket/o?maxResults=1").json)
        let foreign = try await h.send(
            "GET",
            "/storage/v1/b/default-bucket/o?prefix=d/&pageToken="
                + PercentEncoding.uriComponent.encode(first["nextPageToken"]!.stringValue!))
        #expect(foreign.status == 400 && foreign.reason == "invalid")
        let empty = try #require(try await h.send("GET", "/storage/v1/b/default-bucket/o?prefix=zzz").json)
        #expect(empty == .object(["kind": .string("storage#objects")]))
    }

    @Test func listOptionsReachTheService() async throws {
        let h = try JSONHarness()
        for name in ["l/a.txt", "l/b.png", "l/c/", "l/c/d.txt"] { try await h.put(name, [1]) }
        func names(_ query: String) async throws -> [String] {
            let r = try await h.send("GET", "/storage/v1/b/default-bucket/o?" + query)
            #expect(r.status == 200, "\(query): \(r.text)")
            return r.json?["items"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
        }
        #expect(try await names("matchGlob=l/*.txt") == ["l/a.txt"])
        #expect(try await names("startOffset=l/b&endOffset=l/c/d") == ["l/b.png", "l/c/"])
        #expect(
            try await names("prefix=l/&delimiter=/&includeTrailingDelimiter=true") == ["l/a.txt", "l/b.png", "l/c/"])
        #expect(try await h.send("GET", "/storage/v1/b/default-bucket/o?matchGlob=%7Ba").status == 400)
        #expect(try await h.send("GET", "/storage/v1/b/default-bucket/o?maxResults=0").status == 400)
        #expect(try await h.send("GET", "/storage/v1/b/default-bucket/o?maxResults=5000").status == 200)
    }

    @Test func listItemsRevealOnlyWhatTheCallerMayRead() async throws {
        // alice may list everything but read only her own folder: other items show their names alone.
        let rules = ScriptedRules { request in
            request.method == .list || request.path.hasPrefix("alice/")
        }
        let h = try JSONHarness(rules: rules)
        var secret = ObjectAttributes()
        secret.downloadTokens = ["secret-token"]
        try await h.put("alice/mine", [1], attributes: secret)
        try await h.put("bob/theirs", [1], attributes: secret)
        let page = try #require(try await h.send("GET", "/storage/v1/b/default-bucket/o", principal: alice).json)
        let items = try #require(page["items"]?.arrayValue)
        #expect(items.count == 2)
        #expect(items[0]["metadata"]?["firebaseStorageDownloadTokens"]?.stringValue == "secret-token")
        #expect(
            items[1]
                == .object([
                    "kind": .string("storage#object"), "name": .string("bob/theirs"),
                    "bucket": .string("default-bucket"),
                ]))
    }

    @Test func bucketResourceAndBucketList() async throws {
        let h = try JSONHarness()
        let b = try #require(
            try await h.send("GET", "/storage/v1/b/default-bucket?projection=noAcl", principal: nil).json)
        #expect(b["kind"]?.stringValue == "storage#bucket" && b["name"]?.stringValue == "default-bucket")
        #expect(try await h.send("GET", "/storage/v1/b/nope").status == 404)
        let list = try #require(try await h.send("GET", "/storage/v1/b?project=demo").json)
        #expect(list["items"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["default-bucket"])
        #expect(try await h.send("GET", "/storage/v1/b?project=demo", principal: alice).status == 403)
    }

    @Test func routesAndMethods() async throws {
        let h = try JSONHarness()
        #expect(try await h.send("POST", "/storage/v1/b/default-bucket/o").status == 405)
        #expect(try await h.send("GET", "/storage/v1/b/default-bucket/x").status == 404)
        #expect(try await h.send("GET", "/storage/v1/b/default-bucket/o/x?alt=csv").status == 400)
        #expect(try await h.send("GET", "/download/storage/v1/b/default-bucket/o/x?alt=json").status == 400)
        for bad in [
            "prettyPrint=maybe", "projection=all", "fields=a%3Bb", "fields=items(name", "maxResults=2147483648",
        ] {
            let r = try await h.send("GET", "/storage/v1/b/default-bucket/o?" + bad)
            #expect(r.status == 400 && r.reason == "invalid", "\(bad)")
        }
        #expect(
            try await h.send("GET", "/storage/v1/b/default-bucket/o?prettyPrint=false&projection=noAcl&userProject=p")
                .status == 200)
        #expect(
            try await h.send(
                "POST", "/upload/storage/v1/b/default-bucket/o?name=x",
                headers: [("X-Upload-Content-Length", "nope")]
            ).status == 400)
        #expect(try await h.send("PUT", "/upload/storage/v1/b/default-bucket/o?upload_id=").status == 404)
        let options = try await h.send(
            "OPTIONS", JSONHarness.objectPath("x"),
            headers: [("Origin", "http://app.test"), ("Access-Control-Request-Method", "PATCH")])
        #expect(options.status == 204 || options.status == 200)
    }
}
