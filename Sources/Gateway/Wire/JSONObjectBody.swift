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
}
