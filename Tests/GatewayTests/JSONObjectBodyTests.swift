import PortcullisCore
import Service
import Testing

@testable import Gateway

/// `JSONObjectBody`: an object or nothing; every other JSON value, and anything not JSON, is 400.
@Suite struct JSONObjectBodyTests {
    @Test(arguments: [
        "null", "[]", "[{}]", "\"x\"", "\"\"", "42", "-1.5", "true", "false", " null \n", "{", "nul", "{}x",
    ])
    func anythingButAnObjectIs400(_ body: String) {
        #expect(throws: ServiceError.self) { try JSONObjectBody.members(Array(body.utf8)) }
        #expect(throws: ServiceError.self) { try ObjectResourceJSON.decodeUpload(Array(body.utf8)) }
        #expect(throws: ServiceError.self) { try ObjectResourceJSON.decodePatch(Array(body.utf8)) }
    }

    @Test(arguments: ["", " ", "\r\n\t "])
    func anEmptyBodyIsNoMembers(_ body: String) throws {
        #expect(try JSONObjectBody.members(Array(body.utf8)) == nil)
        #expect(try ObjectResourceJSON.decodeUpload(Array(body.utf8)) == ObjectResourceJSON.UploadFields())
    }

    @Test func anObjectIsItsMembers() throws {
        #expect(try JSONObjectBody.members(Array(" {} ".utf8)) == [:])
        #expect(try JSONObjectBody.members(Array(#"{"a":null,"b":[1]}"#.utf8)) == ["a": .null, "b": .array([.int(1)])])
    }

    /// The rules explain request goes through the same rule.
    @Test(arguments: ["", "null", "[]", "\"x\"", "42", "true"])
    func rulesExplainRefusesTheSame(_ body: String) {
        #expect(throws: ServiceError.self) { try RulesExplainRequest.decode(Array(body.utf8)) }
    }
}
