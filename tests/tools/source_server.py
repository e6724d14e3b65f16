"""A small HTTP server the source tests fetch from (never part of the pipeline).

usage: source_server.py ROOT PORTFILE LOGFILE

Listens on 127.0.0.1 only, on a port the system picks, which it writes to
PORTFILE once it accepts connections.  Every request is appended to LOGFILE
as "METHOD PATH", so that a test can count what was fetched.  Routes:

  /files/NAME          ROOT/files/NAME as it is (404 when there is none)
  /redirect/NAME       302 to /files/NAME
  /truncated/NAME      ROOT/files/NAME with a Content-Length 1000 bytes larger
                       than the body, then the connection is closed
  /stall/NAME          the headers and the first half of ROOT/files/NAME, then
                       nothing more (for a fetch that is killed half way)
  /NAME                an npm registry: ROOT/registry/NAME/index.json (the
                       package document), or a file under ROOT/registry/
                       (tarballs at /NAME/-/NAME-VERSION.tgz)
"""
import http.server
import os
import sys
import time
import urllib.parse

root, portfile, logfile = sys.argv[1], sys.argv[2], sys.argv[3]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def send_bytes(self, status, body, ctype="application/octet-stream", length=None):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        if length is not None:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
            self.wfile.flush()
        if length is not None:
            self.close_connection = True

    def not_found(self):
        self.send_bytes(404, b'{"error":"Not found"}\n', "application/json")

    def read(self, *parts):
        path = os.path.join(root, *parts)
        real = os.path.realpath(path)
        if not real.startswith(os.path.realpath(root) + os.sep) or not os.path.isfile(real):
            return None
        with open(real, "rb") as f:
            return f.read()

    def do_GET(self):
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        with open(logfile, "a") as log:
            log.write("%s %s\n" % (self.command, path))
        parts = [p for p in path.split("/") if p]
        if len(parts) == 2 and parts[0] == "files":
            body = self.read("files", parts[1])
            return self.send_bytes(200, body) if body is not None else self.not_found()
        if len(parts) == 2 and parts[0] == "redirect":
            self.send_response(302)
            self.send_header("Location", "/files/" + parts[1])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        if len(parts) == 2 and parts[0] == "truncated":
            body = self.read("files", parts[1])
            if body is None:
                return self.not_found()
            return self.send_bytes(200, body, length=len(body) + 1000)
        if len(parts) == 2 and parts[0] == "stall":
            body = self.read("files", parts[1])
            if body is None:
                return self.not_found()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            time.sleep(600)
            return None
        if len(parts) == 1:
            body = self.read("registry", parts[0], "index.json")
            return self.send_bytes(200, body, "application/json") if body is not None else self.not_found()
        if parts:
            body = self.read("registry", *parts)
            return self.send_bytes(200, body) if body is not None else self.not_found()
        return self.not_found()

    do_HEAD = do_GET


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True  # a stalled reply does not keep the server alive

    def handle_error(self, request, client_address):
        # A client that hangs up on a truncated body is what the test wants.
        if not isinstance(sys.exc_info()[1], (ConnectionError, BrokenPipeError)):
            super().handle_error(request, client_address)


server = Server(("127.0.0.1", 0), Handler)
with open(portfile + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(portfile + ".tmp", portfile)
server.serve_forever()
