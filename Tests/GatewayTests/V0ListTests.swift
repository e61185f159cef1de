import HTTPServer
import PortcullisCore
import Rules
import Storage
import Testing

@testable import Gateway
@testable import Service

@Suite struct V0ListTests {
    static let base = "/v0/b/\(V0Harness.bucket)/o"

    @Test func listShapeWithPrefixesAndItems() async throws {
        let h = try V0Harness()
        for name in [
            "photos/a.png", "photos/b.png", "photos/2024/c.png", "photos/2025/d.png", "other.txt",
            "photos//hidden", "photos/dir/",
        ] {
            try await h.put(name, Array("x".utf8))
        }
        let r = try await h.send("GET", Self.base + "?prefix=photos%2F&delimiter=%2F")
        #expect(r.status == 200)
        let json = try #require(r.json)
        #expect(json["prefixes"] == .array([.string("photos/2024/"), .string("photos/2025/"), .string("photos/dir/")]))
        #expect(
            json["items"]
                == .array([
                    .object(["name": .string("photos/a.png"), "bucket": .string(V0Harness.bucket)]),
                    .object(["name": .string("photos/b.png"), "bucket": .string(V0Harness.bucket)]),
                ]))
        #expect(json["nextPageToken"] == nil)

        let empty = try await h.send("GET", Self.base + "?prefix=nothing%2F&delimiter=%2F")
        #expect(empty.json == .object(["prefixes": .array([]), "items": .array([])]))
    }

    @Test func paginationWithSealedCursors() async throws {
        let h = try V0Harness()
        var expected: [String] = []
        for i in 0..<7 {
            let name = "p/f\(i).txt"
            expected.append(name)
            try await h.put(name, Array("x".utf8))
        }
        try await h.put("p/sub/x.txt", Array("x".utf8))
        var seen: [String] = []
        var prefixes: [String] = []
        var token: String?
        var pages = 0
        repeat {
            var target = Self.base + "?prefix=p%2F&delimiter=%2F&maxResults=3"
            if let token { target += "&pageToken=" + PercentEncoding.uriComponent.encode(token) }
            let r = try await h.send("GET", target)
            #expect(r.status == 200)
            let json = try #require(r.json)
            seen += (json["items"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }
            prefixes += (json["prefixes"]?.arrayValue ?? []).compactMap(\.stringValue)
            let count = (json["items"]?.arrayValue?.count ?? 0) + (json["prefixes"]?.arrayValue?.count ?? 0)
            #expect(count <= 3)
            token = json["nextPageToken"]?.stringValue
            #expect(token != "")
            pages += 1
        } while token != nil && pages < 10
        #expect(seen == expected)
        #expect(prefixes == ["p/sub/"])
        #expect(pages == 3)
    }

    @Test func tamperedOrReplayedCursorsAre400() async throws {
        let h = try V0Harness()
        for i in 0..<3 { try await h.put("a/\(i)", Array("x".utf8)) }
        for i in 0..<3 { try await h.put("b/\(i)", Array("x".utf8)) }
        let first = try await h.send("GET", Self.base + "?prefix=a%2F&delimiter=%2F&maxResults=1")
        let token = try #require(first.json?["nextPageToken"]?.stringValue)

        var tampered = Array(token.utf8)
        let i = tampered.count / 2
        tampered[i] = tampered[i] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let t = String(decoding: tampered, as: UTF8.self)
        let r1 = try await h.send(
            "GET", Self.base + "?prefix=a%2F&delimiter=%2F&pageToken=\(PercentEncoding.uriComponent.encode(t))")
        #expect(r1.status == 400)
        let r2 = try await h.send(
            "GET", Self.base + "?prefix=b%2F&delimiter=%2F&pageToken=\(PercentEncoding.uriComponent.encode(token))")
        #expect(r2.status == 400)
        let r3 = try await h.send(
            "GET", Self.base + "?prefix=a%2F&pageToken=\(PercentEncoding.uriComponent.encode(token))")
        #expect(r3.status == 400)
        let r4 = try await h.send("GET", Self.base + "?prefix=a%2F&delimiter=%2F&pageToken=garbage")
        #expect(r4.status == 400)
        // Another instance with the same key continues the listing; one with another key refuses it.
        let sibling = h.sibling()
        #expect(
            try await h.send(
                "GET", Self.base + "?prefix=a%2F&delimiter=%2F&pageToken=\(PercentEncoding.uriComponent.encode(token))",
                api: sibling
            ).status == 200)
        let strangerService = StorageService(
            configuration: ServiceConfiguration(), backends: [V0Harness.bucket: h.backend],
            sealer: CapabilitySealer(keys: [SigningKey(id: "k1", secret: Array("other".utf8))]),
            rules: RulesStore(fixed: AllowAllRules()), metrics: MetricsRegistry(), logger: .disabled)
        let stranger = V0API(service: strangerService, logger: .disabled)
        #expect(
            try await h.send(
                "GET", Self.base + "?prefix=a%2F&delimiter=%2F&pageToken=\(PercentEncoding.uriComponent.encode(token))",
                api: stranger
            ).status == 400)
    }

    @Test(arguments: ["maxResults=0", "maxResults=1001", "maxResults=abc", "prefix=abc", "delimiter=%7C"])
    func invalidParametersAre400(query: String) async throws {
        let h = try V0Harness()
        let r = try await h.send("GET", Self.base + "?" + query)
        #expect(r.status == 400)
        #expect(r.json?["error"]?["code"] == .int(400))
        if query == "prefix=abc" {
            #expect(
                r.json?["error"]?["message"]
                    == .string("The prefix parameter is required to be empty or ends with a single / character."))
        }
    }

    @Test func listRulesSeeFolderAndDelimiter() async throws {
        let authorizer = ScriptedRules { _ in true }
        let h = try V0Harness(rules: authorizer)
        _ = try await h.send("GET", Self.base + "?prefix=a%2Fb%2F&delimiter=%2F")
        _ = try await h.send("GET", Self.base + "?prefix=&delimiter=%2F")
        let lists = authorizer.requests.filter { $0.method == .list }
        #expect(lists.map(\.path) == ["a/b", ""])
        #expect(lists.allSatisfy { $0.delimiter == "/" && $0.resource == nil })
    }

    @Test func unknownBucketIs404AndWrongMethodIs405() async throws {
        let h = try V0Harness()
        #expect(try await h.send("GET", "/v0/b/nope/o").status == 404)
        #expect(try await h.send("GET", "/v0/b/nope/o/x").status == 404)
        #expect(try await h.send("GET", "/v0/other").status == 404)
        let r = try await h.send("TRACE", Self.base)
        #expect(r.status == 405)
        #expect(r["Allow"]?.contains("GET") == true)
        let o = try await h.send("PROPFIND", Self.base + "/x")
        #expect(o.status == 405)
        #expect(o["Allow"]?.contains("PATCH") == true)
    }
}
