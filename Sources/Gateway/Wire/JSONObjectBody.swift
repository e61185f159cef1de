import PortcullisCore
import Service

/// A request body that must be a JSON object: the one rule for every endpoint that takes one, on every surface
/// (object resources and patches, upload metadata, copy, rewrite and compose bodies, signed-URL requests, the
/// rules explain request).
///
/// Only an object is a body: `null`, an array, a string, a number or a boolean is 400, as is a body that is not
/// JSON, before the endpoint acts, so a refused request changes nothing. An empty body (nothing but JSON
/// whitespace) is nil: each endpoint says what no body means, or refuses it.
enum JSONObjectBody {
    static func members(_ body: [UInt8]) throws(ServiceError) -> [String: JSONValue]? {
        guard body.contains(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }) else { return nil }
        let value: JSONValue
        do { value = try JSONValue.parse(body) } catch { throw ServiceError(error) }
        guard case .object(let members) = value else { throw .badRequest("The request body must be a JSON object.") }
        return members
    }

    /// Whether the body is the JSON literal `null` (with optional whitespace): Cloud Storage reads it as no
    /// body where the body is optional (copyTo, rewriteTo; rclone's server-side copy sends it).
    static func isNull(_ body: [UInt8]) -> Bool {
        let isSpace = { (b: UInt8) in b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 }
        guard let start = body.firstIndex(where: { !isSpace($0) }), let end = body.lastIndex(where: { !isSpace($0) })
        else { return false }
        return body[start...end].elementsEqual("null".utf8)
    }
}
