"""moto's S3 server with AWS's atomic conditional writes.

moto checks `If-None-Match: *` and `If-Match` on PutObject, then stores the object, in two steps with no lock
between them; its server runs each request on a thread of its own. Two create-only PUTs of one new name can
therefore both pass the check and both "win", which AWS and Ceph RGW never allow. The gateway builds its
metadata-update guard and create-only writes on that atomicity, and the tests race such writes against moto,
so this launcher serializes moto's state-changing requests: each one's body is read first (outside the lock, so
a slow sender holds up nobody), then the request runs to its complete response under one process-wide lock.
Reads stay concurrent.

Usage: python moto_server.py HOST PORT
"""

import io
import os
import sys
import threading

from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import run_simple
from werkzeug.wsgi import get_input_stream

MUTATING = {"PUT", "POST", "DELETE"}


class SerializedWrites:
    """WSGI middleware: state-changing requests run one at a time, each from its buffered body to its last byte."""

    def __init__(self, app):
        self.app = app
        self.lock = threading.Lock()

    def __call__(self, environ, start_response):
        if environ.get("REQUEST_METHOD") not in MUTATING:
            return self.app(environ, start_response)
        body = get_input_stream(environ).read()
        environ["wsgi.input"] = io.BytesIO(body)
        environ["CONTENT_LENGTH"] = str(len(body))
        environ.pop("HTTP_TRANSFER_ENCODING", None)
        environ["wsgi.input_terminated"] = False
        with self.lock:
            captured = []

            def capture(status, headers, exc_info=None):
                captured[:] = [status, headers, exc_info]
                return lambda data: None

            chunks = self.app(environ, capture)
            try:
                payload = b"".join(chunks)
            finally:
                close = getattr(chunks, "close", None)
                if close is not None:
                    close()
        start_response(*captured)
        return [payload]


def main():
    host, port = sys.argv[1], int(sys.argv[2])
    os.environ.setdefault("MOTO_PORT", str(port))  # as moto_server sets it: moto builds some URLs from it
    app = DomainDispatcherApplication(create_backend_app)
    run_simple(
        host,
        port,
        SerializedWrites(app),
        threaded=True,
        request_handler=MotoRequestHandler,
    )


if __name__ == "__main__":
    main()
