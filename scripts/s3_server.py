"""A real S3-compatible server on the loopback interface for Strata's tests and benchmarks.

moto's S3 backend (moto 5.2.5, from PyPI), served by werkzeug on 127.0.0.1, with three additions:

- Mutating requests (PUT, POST, DELETE) are serialized. moto checks `If-None-Match: *` and stores the object
  in two steps without a lock, so two racing conditional creates of one key can both succeed (seen: 2 rounds
  of about 1,850 with 16 racers). S3 itself decides such races atomically; so does this server.
- `POST /_strata/latency` with a number of milliseconds delays every later S3 request by that much
  (concurrent requests wait side by side, as on a remote store): what `strata bench` measures against.
- `POST /_strata/fault` with JSON `{"key": SUBSTRING, "status": 500, "after": true, "times": 1}` makes the
  next `times` PUTs or POSTs whose path contains SUBSTRING fail with `status`, after (`after`: true) or
  before applying them: an answer lost after the store applied a write, as a timeout or a 5xx gives it.
  An optional `"method": "PUT"` (or `"POST"`) limits it to that method: the parts of a multipart upload
  are PUTs, its start and completion POSTs.

Usage: python s3_server.py PORT_FILE. The port (chosen by the OS unless STRATA_S3_PORT is set) is written
to PORT_FILE once the server listens. The server exits when its parent process does, so a test binary
that started it never leaves it behind.
"""
import json
import logging
import os
import sys
import threading
import time

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from moto.s3.responses import S3Response
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

_lock = threading.RLock()
_state = {"latency": 0.0, "faults": []}
_state_lock = threading.Lock()


def _serialized(orig):
    def wrapper(self, request, *a, **kw):
        if request.method in ("PUT", "POST", "DELETE"):
            with _lock:
                return orig(self, request, *a, **kw)
        return orig(self, request, *a, **kw)

    return wrapper


S3Response._key_response = _serialized(S3Response._key_response)
S3Response._bucket_response = _serialized(S3Response._bucket_response)


def _take_fault(method, path):
    if method not in ("PUT", "POST"):
        return None
    with _state_lock:
        for f in _state["faults"]:
            if f["key"] in path and f["times"] > 0 and f["method"] in (None, method):
                f["times"] -= 1
                return f
    return None


class StrataControl:
    """The moto application, behind the latency, fault and control endpoints."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path.startswith("/_strata/"):
            return self.control(environ, start_response, path)
        with _state_lock:
            latency = _state["latency"]
        if latency > 0:
            time.sleep(latency)
        fault = _take_fault(environ.get("REQUEST_METHOD", ""), path)
        if fault is None:
            return self.app(environ, start_response)
        if fault["after"]:
            # Apply the request, drop its answer.
            body = self.app(environ, lambda status, headers, exc_info=None: None)
            for _ in body:
                pass
            if hasattr(body, "close"):
                body.close()
        return Response("injected fault", status=fault["status"])(environ, start_response)

    def control(self, environ, start_response, path):
        req = Request(environ)
        data = req.get_data(as_text=True)
        with _state_lock:
            if path == "/_strata/latency":
                _state["latency"] = float(data or 0) / 1000.0
            elif path == "/_strata/fault":
                f = json.loads(data)
                _state["faults"].append(
                    {"key": f["key"], "status": int(f.get("status", 500)), "after": bool(f.get("after", True)),
                     "times": int(f.get("times", 1)), "method": f.get("method")})
            else:
                return Response("unknown control path", status=404)(environ, start_response)
        return Response("ok")(environ, start_response)


def _exit_with_parent(parent):
    while True:
        if os.getppid() != parent:
            os._exit(0)
        time.sleep(0.5)


def main():
    port_file = sys.argv[1]
    # One line per request would drown the test output; errors still show.
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    threading.Thread(target=_exit_with_parent, args=(os.getppid(),), daemon=True).start()
    app = StrataControl(DomainDispatcherApplication(create_backend_app))
    srv = make_server("127.0.0.1", int(os.environ.get("STRATA_S3_PORT", "0")), app, threaded=True,
                      request_handler=MotoRequestHandler)
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_port))
    os.replace(tmp, port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
