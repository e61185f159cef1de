import Testing

@testable import Gateway

/// A stored `contentType` is served as the `Content-Type` header only when it is a media type; anything else is
/// served as unknown bytes (the metadata itself keeps the text as uploaded).
@Suite struct ServedContentTypeTests {
    @Test(arguments: [
        "image/png", "text/plain; charset=utf-8", "text/plain;charset=\"utf-8\"", "application/vnd.a+json",
        "multipart/related; boundary=\"a b\"; x=y", "text/plain;", "text/plain; ; q=1",
        "text/plain; title=\"say \\\"hi\\\"\"",
    ])
    func mediaTypesAreServedAsStored(_ type: String) {
        #expect(ServedContentType.isMediaType(type))
    }

    @Test(arguments: [
        "", "not a type", "text", "text/", "/plain", "text/plain x", "text/plain; charset",
        "text/plain; charset=", "text/plain; charset=\"x", "text/plain; a=\"\u{1}\"", "te xt/plain",
        "text/pl@in", "text/plain; a=b c",
    ])
    func otherTextIsNot(_ type: String) {
        #expect(!ServedContentType.isMediaType(type))
    }
}
