public import HTTPServer
import PortcullisCore
import Rules
public import Service

/// The Cloud Storage JSON API's error shape: `{"error":{"code":N,"message":"…","errors":[{"message":"…",
/// "domain":"global","reason":"notFound"}]}}`, with the reasons GCS uses for each status (Google's clients
/// map the status to their exception types; people and logs read the reason).
public struct JSONErrorShape: ErrorShape {
    public init() {}

    public func response(for error: ServiceError, requestID: String?) -> HTTPResponse {
        let wording = Self.wording(error.details.subject)
        var out = error.jsonErrorOpening(wording: wording)
        out.append(contentsOf: #","errors":[{"message":"#.utf8)
        JSONValue.encodeString(wording ?? error.message, into: &out)
        out.append(contentsOf: #","domain":"global","reason":"#.utf8)
        JSONValue.encodeString(Self.reason(error.kind), into: &out)
        out.append(contentsOf: "}]}}".utf8)
        return error.httpResponse(body: out, requestID: requestID)
    }

    /// Cloud Storage's words for what a failure is about (nil: the error's own message): the IAM permission a
    /// denial lacks, and the object that does not exist.
    static func wording(_ subject: ServiceError.Subject?) -> String? {
        switch subject {
        case .denied(let method)?:
            let resource = method == .list ? "bucket" : "object"
            return "The caller does not have storage.objects.\(method.rawValue) access to the Google Cloud Storage "
                + resource + "."
        case .noSuchObject(let bucket, let name)?:
            return "No such object: \(bucket)/\(name)"
        case nil:
            return nil
        }
    }

    /// GCS's `errors[].reason` for a failure kind.
    static func reason(_ kind: ServiceError.Kind) -> String {
        switch kind {
        case .badRequest: "invalid"
        case .unauthenticated: "authError"
        case .forbidden: "forbidden"
        case .notFound: "notFound"
        case .methodNotAllowed: "methodNotAllowed"
        case .requestTimeout: "requestTimeout"
        case .preconditionFailed: "conditionNotMet"
        case .conflict: "conflict"
        case .payloadTooLarge: "uploadTooLarge"
        case .rangeNotSatisfiable: "requestedRangeNotSatisfiable"
        case .clientClosed: "clientClosedRequest"
        case .internalError: "internalError"
        case .notImplemented: "notImplemented"
        case .badGateway, .unavailable: "backendError"
        case .gatewayTimeout: "deadlineExceeded"
        }
    }
}
