internal import CCurl
import PortcullisCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// curl's callbacks: on the loop thread, from inside the curl calls the loop makes (so they may re-enter from
/// `curl_easy_pause`). They only run while the transfer's handle is in the multi handle, i.e. in a running
/// state of `TransferLifecycle`.
extension CurlTransfer {
    func receiveHeader(_ line: UnsafeRawBufferPointer) -> Int {
        // Lines after the final head (trailers) change nothing.
        guard let handle = lifecycle.handle else { return 0 }
        guard !lifecycle.headDelivered else { return line.count }
        switch ResponseHeadLine(line) {
        case .status(let code):
            handle.status = code
            handle.headers.removeAll(keepingCapacity: true)
        case .end:
            if handle.status >= 200 { deliverHead() }
        case .field(let name, let value):
            if handle.headers.count < 200 { handle.headers.append((name, value)) }
        case .other:
            break
        }
        return line.count
    }

    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        deliverHead()
        guard let easy = lifecycle.handle?.easy else { return 0 }
        lifecycle.activity(now: multi.turnTime)
        let (offer, needsFlush) = response.offer(bytes)
        if needsFlush { multi.scheduleFlush(response) }
        switch offer {
        case .accepted: return bytes.count
        case .acceptedPause:
            // Allowed from inside a callback; curl stops reading after this write returns. Both directions:
            // pausing only receiving makes curl 7.88 schedule the transfer at once with a forced socket read,
            // whose bytes it then keeps in a pause buffer of its own (a malloc'd copy per pause, held while
            // paused) — exactly what pausing early is meant to avoid. Sending is over for a response that streams.
            _ = curl_easy_pause(easy, pc_curl_pause_recv() | pc_curl_pause_send())
            return bytes.count
        case .pause: return pc_curl_writefunc_pause()
        case .refused: return 0
        }
    }

    /// curl's progress callback (about once a second, and on every transfer step): enforces the upstream idle
    /// timeout once the head arrived. Time the transfer spends paused by us (a slow consumer) does not count.
    func checkIdle() -> Int32 {
        guard lifecycle.headDelivered, let handle = lifecycle.handle else { return 0 }
        let now = multi.turnTime
        if response.isReceivePaused || requestBuffer?.isSendPaused == true {
            lifecycle.activity(now: now)
            return 0
        }
        guard let error = lifecycle.expiry(now: now) else { return 0 }
        handle.pendingError = error
        return 1
    }

    func provideBody(_ destination: UnsafeMutableRawBufferPointer) -> Int {
        guard let handle = lifecycle.handle else { return pc_curl_readfunc_abort() }
        switch request.body {
        case .none:
            return 0
        case .bytes(let bytes):
            let n = min(destination.count, bytes.count - handle.bytesOffset)
            if n > 0 {
                bytes.withUnsafeBytes { source in
                    destination.baseAddress!.copyMemory(from: source.baseAddress! + handle.bytesOffset, byteCount: n)
                }
                handle.bytesOffset += n
            }
            if handle.bytesOffset == bytes.count { requestSent() }
            return n
        case .stream(_, let length):
            switch requestBuffer!.take(into: destination) {
            case .bytes(let n):
                handle.streamSent += Int64(n)
                lifecycle.activity(now: multi.turnTime)
                if let length, handle.streamSent >= length { requestSent() }
                return n
            case .end:
                requestSent()
                return 0
            case .pause:
                return pc_curl_readfunc_pause()
            case .failed:
                handle.pendingError = .requestBodyFailed(requestBuffer?.failure ?? "body stream failed")
                return pc_curl_readfunc_abort()
            }
        }
    }

    func seekBody(offset: Int64, origin: Int32) -> Int32 {
        guard let handle = lifecycle.handle else { return CURL_SEEKFUNC_FAIL }
        switch request.body {
        case .none:
            return CURL_SEEKFUNC_OK
        case .bytes(let bytes):
            guard origin == SEEK_SET, offset >= 0, offset <= Int64(bytes.count) else { return CURL_SEEKFUNC_FAIL }
            handle.bytesOffset = Int(offset)
            return CURL_SEEKFUNC_OK
        case .stream:
            return (origin == SEEK_SET && offset == handle.streamSent) ? CURL_SEEKFUNC_OK : CURL_SEEKFUNC_CANTSEEK
        }
    }
}

private func transfer(_ userdata: UnsafeMutableRawPointer?) -> CurlTransfer {
    Unmanaged<CurlTransfer>.fromOpaque(userdata!).takeUnretainedValue()
}

let transferWriteCallback: curl_write_callback = { pointer, size, count, userdata in
    transfer(userdata).receiveBody(UnsafeRawBufferPointer(start: pointer, count: size * count))
}

let transferProgressCallback: curl_xferinfo_callback = { userdata, _, _, _, _ in
    transfer(userdata).checkIdle()
}

let transferHeaderCallback: curl_write_callback = { pointer, size, count, userdata in
    transfer(userdata).receiveHeader(UnsafeRawBufferPointer(start: pointer, count: size * count))
}

let transferReadCallback: curl_read_callback = { pointer, size, count, userdata in
    transfer(userdata).provideBody(UnsafeMutableRawBufferPointer(start: pointer, count: size * count))
}

let transferSeekCallback: curl_seek_callback = { userdata, offset, origin in
    transfer(userdata).seekBody(offset: Int64(offset), origin: origin)
}
