import FuzzReference
// libFuzzer entry point for `JSONRouter.route(_:)` (the Cloud Storage JSON API's route table and decoders): the
// Gateway's JSONRouter.swift, its Routing/ trie and the wire files it reads, compiled into this target through
// symlinks (see Package.swift).
//
// Input, one field per LF-ended line: method, request-target, then header fields `Name: value`. Invariants:
// - routing is deterministic; failures are 400, 404 or 405 (405 with `Allow`), with a message;
// - a routed request lies under one of `JSONRouter.prefixes`; the table resolves it to a route that serves the
//   method and whose template is the operation's;
// - bucket and object names are byte-equal to what an independent percent-decoder makes of the path's segments
//   (`+` stays a plus, `%2F` a slash inside one segment); a bucket is non-empty, an object name valid UTF-8 of
//   1–1024 bytes without CR, LF or NUL;
// - the decoded query re-encodes and re-parses to the same pairs, byte for byte;
// - a listing's `matchGlob` compiles or is refused with a `NameGlob.Error`, and what compiles matches the
//   listing's `prefix` within its cost bound.
import HTTPServer
import PortcullisCore
import Service

private let router = JSONRouter()
private let table = CompiledRoutes(static: JSONRouter.table)

/// The path after one of the roots' `/b/`, cut at `/` bytes: what the names must decode from.
private func referenceSegments(_ path: [UInt8]) -> (root: String, segments: [ArraySlice<UInt8>])? {
    for root in [
        "/storage/v1/b/", "/download/storage/v1/b/", "/upload/storage/v1/b/", "/resumable/upload/storage/v1/b/",
    ] {
        let prefix = Array(root.utf8)
        guard path.starts(with: prefix) else { continue }
        return (root, path[prefix.count...].split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false))
    }
    return nil
}

private func expectName(_ name: String, _ raw: some Collection<UInt8>, _ what: String) {
    let bytes = Array(name.utf8)
    precondition(
        referenceDecode(raw, plusIsSpace: false) == bytes, "\(what) \(name.debugDescription) is not the path's")
}

private func checkObject(_ object: ObjectPath, _ raw: some Collection<UInt8>) {
    expectName(object.name, raw, "object name")
    let bytes = Array(object.name.utf8)
    precondition((1...ObjectPath.maxNameBytes).contains(bytes.count), "name of \(bytes.count) bytes")
    precondition(!bytes.contains(0x0A) && !bytes.contains(0x0D) && !bytes.contains(0), "control byte in a name")
}

private func checkQuery(_ query: QueryParameters) {
    let encoded = query.pairs.map {
        PercentEncoding.uriComponent.encode($0.name) + "=" + PercentEncoding.uriComponent.encode($0.value)
    }.joined(separator: "&")
    guard let again = try? QueryParameters(parsing: encoded[...]) else {
        preconditionFailure("re-encoded query does not parse: \(encoded)")
    }
    precondition(again == query, "re-encoded query has other pairs")
}

private func checkRouted(_ operation: JSONOperation, _ query: QueryParameters, _ request: HTTPRequest) {
    precondition(JSONRouter.prefixes.contains { request.path.bytesHasPrefix($0) }, "routed outside the prefixes")
    guard case .matched(let route, _) = table.resolve(request.method, path: request.path) else {
        preconditionFailure("routed a request the table does not match")
    }
    precondition(route.serves(request.method), "\(request.method.rawValue) on \(route.template)")
    let expected: String
    switch operation {
    case .listBuckets, .insertBucket: expected = JSONRouter.bucketsTemplate
    case .getBucket, .changeBucket, .deleteBucket: expected = JSONRouter.bucketTemplate
    case .listObjects: expected = JSONRouter.objectsTemplate
    case .upload, .resumable:
        expected =
            request.path.bytesHasPrefix("/resumable/") ? JSONRouter.resumableUploadTemplate : JSONRouter.uploadTemplate
    case .move: expected = JSONRouter.moveTemplate
    case .compose: expected = JSONRouter.composeTemplate
    case .copy(_, _, let rewrite): expected = rewrite ? JSONRouter.rewriteTemplate : JSONRouter.copyTemplate
    case .download:
        expected = request.path.bytesHasPrefix("/download/") ? JSONRouter.downloadTemplate : JSONRouter.objectTemplate
    case .getMetadata, .patch, .update, .delete: expected = JSONRouter.objectTemplate
    }
    // Labels write `{object...}` as `{object}`: the label names the route.
    precondition(route.template.label.bytesEqual(expected), "\(operation) from \(route.template)")

    let path = Array(request.path.utf8)
    // The bucket collection's path has no bucket segment to check.
    guard expected.bytesEqual(JSONRouter.bucketsTemplate) else {
        guard let (root, s) = referenceSegments(path), !s.isEmpty else {
            preconditionFailure("routed \(operation) from a path without a bucket")
        }
        let bucket = operation.bucket ?? ""
        precondition(!bucket.isEmpty, "empty bucket")
        switch operation {
        case .copy(let source, let destination, _):
            expectName(source.bucket, s[0], "bucket")
            expectName(destination.bucket, s[5], "destination bucket")
            checkObject(source, s[2])
            checkObject(destination, s[7])
        case .compose(let object):
            expectName(object.bucket, s[0], "bucket")
            checkObject(object, s[2])
        case .move(let source, let destination):
            expectName(source.bucket, s[0], "bucket")
            expectName(destination.bucket, s[0], "bucket")
            checkObject(source, s[2])
            checkObject(destination, s[5])
        case .getMetadata(let object), .download(let object), .patch(let object), .update(let object),
            .delete(let object):
            expectName(object.bucket, s[0], "bucket")
            // Everything after `/o/`, raw slashes included.
            let start = root.utf8.count + s[0].count + 3
            precondition(path.count > start && path[(start - 3)..<start].elementsEqual("/o/".utf8), "no /o/")
            checkObject(object, path[start...])
        case .getBucket, .changeBucket, .deleteBucket, .listObjects, .upload, .resumable:
            expectName(bucket, s[0], "bucket")
        case .listBuckets, .insertBucket:
            break
        }
        checkQuery(query)
        if case .listObjects = operation { checkGlob(query) }
        return
    }
    checkQuery(query)
}

/// What the listing handler does with `matchGlob`: compile it (or refuse it as 400) and match names with it.
private func checkGlob(_ query: QueryParameters) {
    guard let pattern = query["matchGlob"] else { return }
    do {
        let glob = try NameGlob(pattern)
        let prefix = Array((query["prefix"] ?? "").utf8)
        var work = 0
        let matched = glob.matches(utf8: prefix, work: &work)
        precondition(work <= glob.matchCost(byteCount: prefix.count), "glob work past its bound")
        precondition(matched == glob.matches(query["prefix"] ?? ""), "glob answers differ")
    } catch {
        precondition(!"\(error)".isEmpty, "glob error without a message")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSONRouter(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let request = fuzzRequest(start, count) else { return 0 }

    typealias Routed = (JSONOperation, QueryParameters)
    let first: Result<Routed, ServiceError> = Result { () throws(ServiceError) in try router.route(request) }
    let second: Result<Routed, ServiceError> = Result { () throws(ServiceError) in try router.route(request) }
    switch (first, second) {
    case (.success(let a), .success(let b)):
        precondition(a.0 == b.0 && a.1 == b.1, "routing is not deterministic")
        checkRouted(a.0, a.1, request)
    case (.failure(let a), .failure(let b)):
        checkRoutingFailures(a, b)
    default:
        preconditionFailure("routing is not deterministic")
    }
    return 0
}
