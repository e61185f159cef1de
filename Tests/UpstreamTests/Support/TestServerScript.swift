/// A small threaded HTTP/1.1 server used as a real upstream in tests. It prints `PORT <n>` once listening on
/// 127.0.0.1 (port chosen by the OS) and exits when its stdin closes (the test process went away).
let testServerScript = #"""
    import http.server, socketserver, sys, threading, time, json, os, urllib.parse

    hits = {}
    lock = threading.Lock()
    connections = [0]

    def pattern(n, offset=0):
        return bytes(((offset + i) % 251) for i in range(n))

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        def log_message(self, *a): pass

        def setup(self):
            super().setup()
            with lock: connections[0] += 1

        def read_body(self):
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                out = b""
                while True:
                    size = int(self.rfile.readline().strip().split(b";")[0], 16)
                    if size == 0:
                        while self.rfile.readline().strip(): pass
                        return out
                    out += self.rfile.read(size)
                    self.rfile.readline()
            n = int(self.headers.get("Content-Length", "0") or 0)
            return self.rfile.read(n) if n else b""

        def send_bytes(self, status, body, headers=()):
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            for k, v in headers: self.send_header(k, v)
            self.end_headers()
            if self.command != "HEAD": self.wfile.write(body)

        def handle_any(self):
            url = urllib.parse.urlparse(self.path)
            q = {k: v[0] for k, v in urllib.parse.parse_qs(url.query).items()}
            path = url.path
            if path == "/bytes":
                n = int(q.get("n", "0"))
                self.send_response(200)
                self.send_header("Content-Length", str(n))
                self.send_header("Content-Type", "application/octet-stream")
                self.end_headers()
                if self.command == "HEAD": return
                sent = 0
                try:
                    while sent < n:
                        k = min(65536, n - sent)
                        self.wfile.write(pattern(k, sent))
                        sent += k
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True
            elif path == "/echo":
                body = self.read_body()
                hdrs = json.dumps({k.lower(): v for k, v in self.headers.items()})
                self.send_bytes(200, body, [("X-Method", self.command), ("X-Length", str(len(body))), ("X-Headers", hdrs)])
            elif path == "/slowhead":
                time.sleep(float(q.get("s", "1")))
                self.send_bytes(200, b"late")
            elif path == "/truncate":
                n = int(q.get("n", "1000")); m = int(q.get("send", "10"))
                self.send_response(200)
                self.send_header("Content-Length", str(n))
                self.end_headers()
                self.wfile.write(pattern(m))
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(2)
            elif path == "/stall":
                m = int(q.get("send", "10"))
                self.send_response(200)
                self.send_header("Content-Length", str(m + 10))
                self.end_headers()
                self.wfile.write(pattern(m))
                self.wfile.flush()
                time.sleep(float(q.get("s", "5")))
                self.close_connection = True
            elif path == "/flaky":
                key = q.get("key", ""); fail = int(q.get("fail", "1"))
                with lock:
                    hits[key] = hits.get(key, 0) + 1
                    count = hits[key]
                if count <= fail:
                    self.send_bytes(503, b"busy", [("Retry-After", "0")])
                else:
                    self.send_bytes(200, ("ok after %d" % count).encode())
            elif path == "/dropthenhang":
                key = q.get("key", "")
                with lock:
                    hits[key] = hits.get(key, 0) + 1
                    count = hits[key]
                if count == 1:
                    self.close_connection = True
                    self.connection.shutdown(2)
                else:
                    time.sleep(float(q.get("s", "30")))
                    self.send_bytes(200, b"late")
            elif path == "/hits":
                with lock: count = hits.get(q.get("key", ""), 0)
                self.send_bytes(200, str(count).encode())
            elif path == "/connections":
                with lock: count = connections[0]
                self.send_bytes(200, str(count).encode())
            elif path == "/status":
                extra = [("Retry-After", q["retry_after"])] if "retry_after" in q else []
                self.send_bytes(int(q.get("code", "200")), b"status", extra)
            else:
                self.send_bytes(404, b"not found")

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = handle_any

    class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True
        allow_reuse_address = True
        request_queue_size = 512

    def watchdog():
        sys.stdin.read()
        os._exit(0)

    server = Server(("127.0.0.1", 0), Handler)
    print("PORT %d" % server.server_address[1], flush=True)
    threading.Thread(target=watchdog, daemon=True).start()
    server.serve_forever()
    """#
