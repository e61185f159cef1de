import PortcullisCore
import Service
import Testing

@testable import Gateway

/// `BatchCodec`: the batch endpoint's `multipart/mixed` bodies, fed as literal bytes.
@Suite struct BatchCodecTests {
    /// The shape google-cloud-storage writes (CRLF, absolute URLs, a JSON body with its length) and the one
    /// gcsfs writes (bare LF, origin form, no body).
    @Test func partsAsGoogleClientsWriteThem() throws {
        let crlf =
            "--===0==\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\nContent-ID: <a+1>\r\n\r\n"
            + "PATCH http://127.0.0.1:9/storage/v1/b/b/o/x?projection=full HTTP/1.1\r\n"
            + "Content-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"a\":\"b\"}\r\n\r\n"
            + "--===0==\r\nContent-Type: application/http\r\nContent-ID: <a+2>\r\n\r\n"
            + "DELETE /storage/v1/b/b/o/y HTTP/1.1\r\n\r\n\r\n--===0==--\r\n"
        let parts = try BatchCodec.parse(Array(crlf.utf8), boundary: "===0==")
        #expect(parts.count == 2)
        #expect(parts[0].method == "PATCH" && parts[0].target == "/storage/v1/b/b/o/x?projection=full")
        #expect(parts[0].body == Array("{\"a\":\"b\"}\r\n".utf8))
        #expect(parts[0].contentID == "<a+1>")
        #expect(parts[1].method == "DELETE" && parts[1].target == "/storage/v1/b/b/o/y" && parts[1].body.isEmpty)

        let lf =
            "\n--B\nContent-Type: application/http\nContent-ID: <1>\n\nDELETE /storage/v1/b/b/o/k HTTP/1.1\n"
            + "Content-Type: application/json\naccept: application/json\ncontent-length: 0\n\n\n--B--"
        let single = try BatchCodec.parse(Array(lf.utf8), boundary: "B")
        #expect(single.count == 1 && single[0].target == "/storage/v1/b/b/o/k" && single[0].body.isEmpty)
    }

    @Test(arguments: [
        "",  // no part
        "--B\r\n\r\nDELETE /x HTTP/1.1\r\n\r\n",  // never closed
        "--B\r\n\r\nDELETE HTTP/1.1\r\n\r\n--B--",  // no target
        "--B\r\n\r\nDELETE x HTTP/1.1\r\n\r\n--B--",  // not a path
        "--B\r\n\r\nDELETE /x HTTP/1.1\r\nContent-Length: 5\r\n\r\nab\r\n--B--",  // body shorter than declared
        "--B\r\n\r\nDELETE /x HTTP/1.1\r\nno colon\r\n\r\n--B--",
    ])
    func malformedBatchesAre400(_ body: String) {
        #expect(throws: ServiceError.self) { try BatchCodec.parse(Array(body.utf8), boundary: "B") }
    }

    @Test func atMostAHundredParts() throws {
        func body(_ n: Int) -> [UInt8] {
            Array(
                (String(repeating: "--B\r\n\r\nDELETE /storage/v1/b/b/o/x HTTP/1.1\r\n\r\n\r\n", count: n) + "--B--\r\n")
                    .utf8)
        }
        #expect(try BatchCodec.parse(body(100), boundary: "B").count == 100)
        #expect(throws: ServiceError.self) { try BatchCodec.parse(body(101), boundary: "B") }
    }

    @Test func boundaryOfMultipartMixedOnly() {
        #expect(BatchCodec.boundary(contentType: "multipart/mixed; boundary=\"===1==\"") == "===1==")
        #expect(BatchCodec.boundary(contentType: "Multipart/Mixed;boundary=abc") == "abc")
        #expect(BatchCodec.boundary(contentType: "multipart/related; boundary=abc") == nil)
        #expect(BatchCodec.boundary(contentType: "multipart/mixed") == nil)
    }

    @Test func answersCarryTheResponseContentIDsInOrder() {
        let out = BatchCodec.render(
            [
                BatchCodec.Answer(contentID: "<a+1>", status: 204, reason: "No Content", headers: [], body: []),
                BatchCodec.Answer(
                    contentID: nil, status: 404, reason: "Not Found", headers: [("Content-Type", "application/json")],
                    body: Array("{}".utf8)),
            ], boundary: "batch_1")
        #expect(
            String(decoding: out, as: UTF8.self)
                == "--batch_1\r\nContent-Type: application/http\r\nContent-ID: <response-a+1>\r\n\r\n"
                + "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n\r\n"
                + "--batch_1\r\nContent-Type: application/http\r\n\r\n"
                + "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}\r\n"
                + "--batch_1--\r\n")
    }
}
