import FuzzReference
// libFuzzer entry point for the v0 route table (`Gateway.V0Router.route(_:)`: the table compiled alone, as the
// gateway's router compiles it with the others) and `QueryParameters`.
//
// Input, one field per LF-ended line: method, request-target, then header fields `Name: value`. Invariants:
// - query strings: whatever parses re-encodes and re-parses to the same pairs, byte for byte;
// - routing is deterministic; failures are 400, 404 or 405 (405 with `Allow`), with a message;
// - a routed request's bucket is the path's bucket segment, decoded; whether it exists is the service's;
// - a routed object name is valid UTF-8, 1–1024 bytes, without CR/LF, and is byte-equal to what an
//   independent decoder makes of the path (object routes) or of the first `name` parameter (collection
//   routes); it survives `encodeComponent` → `decode`;
// - the operation fits the method (GET/HEAD read or list, PATCH updates, DELETE deletes, only POST/PUT
//   write) and the route (object-only operations never come from `/o`, listing never from `/o/{object}`);
// - a multipart upload's boundary is what `MultipartReader.boundary` reads from the Content-Type.
import Gateway
import HTTPServer
import PortcullisCore
import Service

private let router = V0Router()

/// The first `name` parameter of a raw query, decoded by the reference decoder.
private func referenceNameParameter(_ query: Substring?) -> [UInt8]? {
    guard let query else { return nil }
    for piece in Array(query.utf8).split(separator: UInt8(ascii: "&")) {
        let eq = piece.firstIndex(of: UInt8(ascii: "=")) ?? piece.endIndex
        guard referenceDecode(piece[..<eq], plusIsSpace: true) == Array("name".utf8) else { continue }
        return referenceDecode(eq == piece.endIndex ? [] : piece[(eq + 1)...], plusIsSpace: true)
    }
    return nil
}

private func checkQuery(_ raw: Substring?) {
    guard let query = try? QueryParameters(parsing: raw) else { return }
    let encoded = query.pairs.map {
        PercentEncoding.uriComponent.encode($0.name) + "=" + PercentEncoding.uriComponent.encode($0.value)
    }.joined(separator: "&")
    guard let again = try? QueryParameters(parsing: encoded[...]) else {
        preconditionFailure("re-encoded query does not parse: \(encoded)")
    }
    precondition(again.pairs.count == query.pairs.count, "re-encoded query has other pairs")
    for (a, b) in zip(query.pairs, again.pairs) {
        precondition(a.name.bytesEqual(b.name) && a.value.bytesEqual(b.value), "query pair changed: \(a) → \(b)")
    }
}

private func checkRouted(_ routed: RoutedRequest, _ request: HTTPRequest) {
    let op = routed.operation
    let method = request.method.rawValue
    let path = Array(request.path.utf8)
    let bucketEnd = path[6...].firstIndex(of: UInt8(ascii: "/"))!  // "/v0/b/" then the bucket
    precondition(referenceDecode(path[6..<bucketEnd], plusIsSpace: false) == Array(op.bucket.utf8), "bucket")
    let isObjectRoute = path[bucketEnd...].starts(with: "/o/".utf8)

    if let name = op.objectName {
        let bytes = Array(name.utf8)
        precondition(String(validating: bytes, as: UTF8.self) != nil, "name is not UTF-8")
        precondition((1...ObjectPath.maxNameBytes).contains(bytes.count), "name of \(bytes.count) bytes")
        precondition(!bytes.contains(0x0A) && !bytes.contains(0x0D), "line break in a name")
        let expected: [UInt8]?
        if isObjectRoute {
            expected = referenceDecode(path[(bucketEnd + 3)...], plusIsSpace: false)
        } else {
            expected = referenceNameParameter(request.query)
        }
        precondition(expected == bytes, "routed name \(name) is not the request's")
        let roundTrip = PercentEncoding.decode(PercentEncoding.uriComponent.encode(name)[...], plusIsSpace: false)
        precondition(roundTrip.map { $0.bytesEqual(name) } ?? false, "name does not survive encode/decode")
    }

    switch op {
    case .getMetadata, .download, .downloadURL:
        precondition(isObjectRoute && ["GET", "HEAD"].contains { $0.bytesEqual(method) }, "read from \(method)")
    case .list:
        precondition(!isObjectRoute && ["GET", "HEAD"].contains { $0.bytesEqual(method) }, "list from \(method)")
    case .updateMetadata:
        precondition(isObjectRoute && ["PATCH", "PUT"].contains { $0.bytesEqual(method) }, "update from \(method)")
    case .delete:
        precondition(method.bytesEqual("DELETE"), "delete from \(method)")
    case .createToken, .deleteToken, .signURL:
        precondition(isObjectRoute && ["POST", "PUT"].contains { $0.bytesEqual(method) }, "admin op from \(method)")
    case .uploadMedia, .uploadMultipart, .resumableStart:
        precondition(method.bytesEqual("POST"), "upload from \(method)")
    case .resumableContinue(_, let uploadID):
        precondition(["POST", "PUT"].contains { $0.bytesEqual(method) } && !uploadID.isEmpty, "continue")
    }
    if case .uploadMultipart(_, _, let boundary) = op {
        let declared = MultipartReader.boundary(contentType: request.headers["Content-Type"] ?? "")
        precondition(declared.bytesEqual(boundary), "boundary \(boundary) is not the Content-Type's")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzV0Router(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let request = fuzzRequest(start, count) else { return 0 }

    checkQuery(request.query)
    let first: Result<RoutedRequest, ServiceError> = Result { () throws(ServiceError) in try router.route(request) }
    let second: Result<RoutedRequest, ServiceError> = Result { () throws(ServiceError) in try router.route(request) }
    switch (first, second) {
    case (.success(let a), .success(let b)):
        precondition(
            a.operation == b.operation && a.query == b.query,
            "routing is not deterministic")
        checkRouted(a, request)
    case (.failure(let a), .failure(let b)):
        checkRoutingFailures(a, b)
    default:
        preconditionFailure("routing is not deterministic")
    }
    return 0
}
