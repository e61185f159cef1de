internal import CCurl

/// Setting up a transfer's easy handle: URL, method, body callbacks, headers, timeouts.
extension CurlTransfer {
    /// A configured easy handle for `request`, not yet in the multi handle. On failure nothing is left
    /// allocated.
    func configure() throws(UpstreamError) -> CurlHandle {
        guard let easy = multi.takeEasy() else { throw .invalidRequest("curl_easy_init failed") }
        let handle = CurlHandle(easy: easy)
        do throws(UpstreamError) {
            try configure(handle)
            return handle
        } catch {
            if let list = handle.headerList { curl_slist_free_all(list) }
            multi.recycle(easy: easy)
            throw error
        }
    }

    private func configure(_ handle: CurlHandle) throws(UpstreamError) {
        let easy = handle.easy
        let me = Unmanaged.passUnretained(self).toOpaque()
        func check(_ code: CURLcode, _ what: String) throws(UpstreamError) {
            guard code == CURLE_OK else {
                throw .invalidRequest("\(what): \(String(cString: curl_easy_strerror(code)))")
            }
        }
        try check(pc_curl_easy_setopt_string(easy, CURLOPT_URL, request.url), "URL")
        // Verbatim: no dot-segment removal, so S3 keys like `a/../b` reach the server (and the signer) as given.
        _ = pc_curl_easy_setopt_long(easy, CURLOPT_PATH_AS_IS, 1)
        try check(pc_curl_easy_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https"), "protocols")
        _ = pc_curl_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
        _ = pc_curl_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer)
        _ = pc_curl_easy_setopt_long(easy, CURLOPT_TCP_KEEPALIVE, 1)
        _ = pc_curl_easy_setopt_long(easy, CURLOPT_TCP_NODELAY, 1)
        // Checked: curl refuses a new size while an earlier transfer's buffer is still allocated on the handle,
        // and a reused handle must read at this transfer's size (`ReceiveSizing`).
        try check(pc_curl_easy_setopt_long(easy, CURLOPT_BUFFERSIZE, receiveBufferBytes), "receive buffer size")
        if let connect = request.timeouts.connect {
            _ = pc_curl_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, max(1, Int(connect * 1000)))
        }
        if let idle = request.timeouts.idle {
            // Below 1 byte/s for `idle` seconds; curl exempts transfers we paused ourselves.
            _ = pc_curl_easy_setopt_long(easy, CURLOPT_LOW_SPEED_LIMIT, 1)
            _ = pc_curl_easy_setopt_long(easy, CURLOPT_LOW_SPEED_TIME, max(1, Int(idle.rounded(.up))))
        }
        if !multi.verifyTLS {
            _ = pc_curl_easy_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 0)
            _ = pc_curl_easy_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 0)
        }
        _ = pc_curl_easy_setopt_write_function(easy, CURLOPT_WRITEFUNCTION, transferWriteCallback)
        _ = pc_curl_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, me)
        _ = pc_curl_easy_setopt_write_function(easy, CURLOPT_HEADERFUNCTION, transferHeaderCallback)
        _ = pc_curl_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, me)
        _ = pc_curl_easy_setopt_long(easy, CURLOPT_NOPROGRESS, 0)
        _ = pc_curl_easy_setopt_xferinfo_function(easy, transferProgressCallback)
        _ = pc_curl_easy_setopt_pointer(easy, CURLOPT_XFERINFODATA, me)
        _ = pc_curl_easy_setopt_closesocket_function(easy, curlCloseSocketCallback)
        _ = pc_curl_easy_setopt_pointer(easy, CURLOPT_CLOSESOCKETDATA, multi.closeSocketContext)

        // Method and body.
        let method = request.method.uppercased()
        guard !method.isEmpty, method.utf8.allSatisfy(Self.isASCIILetter) else { throw .invalidRequest("bad method") }
        var bodyLength: Int64?
        var hasBody = true
        switch request.body {
        case .none: bodyLength = 0; hasBody = !["GET", "HEAD", "DELETE", "OPTIONS"].contains(method)
        case .bytes(let bytes): bodyLength = Int64(bytes.count)
        case .stream(_, let length): bodyLength = length
        }
        if !hasBody {
            // curl (7.88) still allocates its upload buffer (64 KiB by default) to send the request head over TLS;
            // a bodiless request needs only the minimum.
            _ = pc_curl_easy_setopt_long(easy, CURLOPT_UPLOAD_BUFFERSIZE, 16 * 1024)
        }
        if method == "HEAD" {
            _ = pc_curl_easy_setopt_long(easy, CURLOPT_NOBODY, 1)
        } else if method == "GET" && !hasBody {
            _ = pc_curl_easy_setopt_long(easy, CURLOPT_HTTPGET, 1)
        } else {
            if hasBody {
                // UPLOAD sends the body from the read callback with Content-Length (or chunked when unknown);
                // the custom method replaces its default PUT.
                _ = pc_curl_easy_setopt_long(easy, CURLOPT_UPLOAD, 1)
                _ = pc_curl_easy_setopt_off(easy, CURLOPT_INFILESIZE_LARGE, curl_off_t(bodyLength ?? -1))
                _ = pc_curl_easy_setopt_read_function(easy, transferReadCallback)
                _ = pc_curl_easy_setopt_pointer(easy, CURLOPT_READDATA, me)
                _ = pc_curl_easy_setopt_seek_function(easy, transferSeekCallback)
                _ = pc_curl_easy_setopt_pointer(easy, CURLOPT_SEEKDATA, me)
            }
            if method != "PUT" || !hasBody {
                try check(pc_curl_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, method), "method")
            }
        }

        // Headers.
        var list: UnsafeMutablePointer<curl_slist>?
        func add(_ line: String) { list = curl_slist_append(list, line) }
        for (name, value) in request.headers {
            guard Self.isSafeField(name: name, value: value) else {
                handle.headerList = list
                throw .invalidRequest("header \(name) is malformed")
            }
            // `Name;` is curl's syntax for a header with an empty value.
            add(value.isEmpty ? "\(name);" : "\(name): \(value)")
        }
        if hasBody {
            add("Expect:")  // no 100-continue round trip
        }
        if hasBody && request.headers.first(ignoringCase: "content-type") == nil && bodyLength != 0 {
            add("Content-Type: application/octet-stream")
        }
        handle.headerList = list
        if let list { _ = pc_curl_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, list) }
    }

    /// Whether `name: value` goes out as exactly one header line: checked on bytes, because a `Character` holds
    /// CR LF as one grapheme cluster (as it does `\n` with a combining mark after it), which compares equal to
    /// neither `"\r"` nor `"\n"`.
    static func isSafeField(name: String, value: String) -> Bool {
        !name.isEmpty
            && !name.utf8.contains(where: { $0 == UInt8(ascii: ":") || $0 <= 0x20 || $0 == 0x7F })
            && !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 })
    }

    private static func isASCIILetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
    }
}
