"""A local stand-in for the GitHub REST API's release endpoints, as GitHub documents them, for
testing `sagebuild release` on 127.0.0.1: get a release by tag (drafts excluded), list releases and
assets with Link pagination, create a release (422 already_exists), upload assets under
/api/uploads (as GitHub Enterprise Server does; 422 already_exists, assets with a sha256 digest and
a state), delete assets, rate-limit headers, Bearer-token auth, and an optional path prefix (GitHub
Enterprise's /api/v3). A second server, "elsewhere", stands for a host the API's answers may name
(a Link header, an upload_url): it records every request and the Authorization it carried.

Faults are queued by the test and consumed in order by matching requests:
  status      answer with that status (e.g. 502) and a JSON message
  drop        close the connection without an answer
  stall       send nothing for `seconds`, then close (a client timeout)
  primary     403 with x-ratelimit-remaining 0 and a reset `seconds` ahead
  secondary   429 with retry-after `seconds`
  store_502   (uploads) store the asset completely, then answer 502
  partial     (uploads) read half the body, leave the asset in state "starter", close
  json        answer 200 with the document `arg` (a wrong type in a field, say)
  slow        (uploads) read the body at about 100 KB/s (a client stopped meanwhile leaves a
              "starter" asset, as any body cut short does)
"""
import hashlib
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

PAGE_SIZE = 2  # small, so that every listing is paginated
UPLOADS = "/api/uploads"  # where uploads go, on the API's own host (GitHub Enterprise Server)


class State:
    def __init__(self, token, repo, prefix=""):
        self.token = token
        self.repo = repo
        self.prefix = prefix
        self.lock = threading.Lock()
        self.releases = []  # dicts
        self.assets = {}  # release id -> list of asset dicts (with "data")
        self.next_id = 100
        self.faults = []  # (method, path regex, kind, arg)
        self.log = []  # (method, path, status)
        self.upload_base = ""
        self.api_base = ""
        self.elsewhere_base = ""
        self.elsewhere_log = []  # (method, path, Authorization header or None)
        self.link_elsewhere = False  # listings name the "elsewhere" server as their next page
        self.upload_elsewhere = False  # releases name the "elsewhere" server as their upload_url
        self.drop_digests = False  # assets listed without "digest", as older servers answer

    def new_id(self):
        self.next_id += 1
        return self.next_id

    def add_fault(self, method, pattern, kind, arg=None):
        self.faults.append((method, re.compile(pattern), kind, arg))

    def take_fault(self, method, path):
        with self.lock:
            for i, (m, p, kind, arg) in enumerate(self.faults):
                if m == method and p.search(path):
                    del self.faults[i]
                    return kind, arg
        return None, None

    def release_json(self, r):
        out = {k: v for k, v in r.items()}
        base = self.elsewhere_base if self.upload_elsewhere else self.upload_base
        out["upload_url"] = f"{base}/repos/{self.repo}/releases/{r['id']}/assets{{?name,label}}"
        out["html_url"] = f"https://github.example/{self.repo}/releases/tag/{r['tag_name']}"
        out["url"] = f"{self.api_base}/repos/{self.repo}/releases/{r['id']}"
        return out

    def asset_json(self, a):
        return {k: v for k, v in a.items() if k != "data" and not (k == "digest" and self.drop_digests)}

    def add_asset(self, release_id, name, data, state="uploaded"):
        asset = {"id": self.new_id(), "name": name, "size": len(data), "state": state,
                 "content_type": "application/octet-stream",
                 "digest": "sha256:" + hashlib.sha256(data).hexdigest(), "data": data}
        self.assets.setdefault(release_id, []).append(asset)
        return asset


def make_elsewhere_handler(state):
    class Elsewhere(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def handle_any(self):
            state.elsewhere_log.append((self.command, self.path, self.headers.get("Authorization")))
            n = int(self.headers.get("Content-Length") or 0)
            if n:
                self.rfile.read(n)
            body = b"[]"
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_DELETE = do_PATCH = handle_any

    return Elsewhere


def make_handler(state):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def send_json(self, status, doc, headers=None):
            body = json.dumps(doc).encode()
            # Logged before the response goes out: a client that has its answer (and a test
            # that then reads the log) must find the request there.
            state.log.append((self.command, self.path, status))
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("x-ratelimit-limit", "5000")
                self.send_header("x-ratelimit-remaining", "4999")
                self.send_header("x-ratelimit-reset", str(int(time.time()) + 3600))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client went away (a test stops it on purpose)

        def read_body(self):
            n = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(n) if n else b""

        def paginate(self, items, base_path, query):
            page = int(query.get("page", ["1"])[0])
            start = (page - 1) * PAGE_SIZE
            chunk = items[start:start + PAGE_SIZE]
            headers = {}
            if start + PAGE_SIZE < len(items):
                base = (state.elsewhere_base if state.link_elsewhere else state.api_base) + base_path
                headers["Link"] = (f'<{base}?per_page={PAGE_SIZE}&page={page + 1}>; rel="next", '
                                   f'<{base}?per_page={PAGE_SIZE}&page=1>; rel="first"')
            return chunk, headers

        def handle_any(self):
            url = urlsplit(self.path)
            path, query = url.path, parse_qs(url.query)
            upload_host = path.startswith(UPLOADS)
            if upload_host:
                path = path[len(UPLOADS):]
            kind, arg = state.take_fault(self.command, path)
            if kind == "drop":
                self.read_body()
                self.close_connection = True
                self.connection.close()
                return
            if kind == "stall":
                time.sleep(arg)
                self.close_connection = True
                self.connection.close()
                return
            if kind == "status":
                self.read_body()
                return self.send_json(arg, {"message": "Server Error"})
            if kind == "json":  # an answer of the right status with the document given
                self.read_body()
                return self.send_json(200, arg)
            if kind == "primary":
                self.read_body()
                return self.send_json(403, {"message": "API rate limit exceeded"},
                                      {"x-ratelimit-remaining": "0",
                                       "x-ratelimit-reset": str(int(time.time()) + arg)})
            if kind == "secondary":
                self.read_body()
                return self.send_json(429, {"message": "You have exceeded a secondary rate limit"},
                                      {"retry-after": str(arg)})
            if self.headers.get("Authorization") != f"Bearer {state.token}":
                self.read_body()
                return self.send_json(401, {"message": "Bad credentials"})
            if not upload_host:
                if not path.startswith(state.prefix):
                    return self.send_json(404, {"message": "Not Found"})
                path = path[len(state.prefix):]
            repo_prefix = f"/repos/{state.repo}"
            if not path.startswith(repo_prefix + "/"):
                self.read_body()
                return self.send_json(404, {"message": "Not Found"})
            rest = path[len(repo_prefix):]
            with state.lock:
                return self.route(rest, query, kind, upload_host)

        def route(self, rest, query, kind, upload_host):
            m = re.fullmatch(r"/releases/(\d+)/assets", rest)
            if upload_host:
                if self.command != "POST" or not m:
                    return self.send_json(404, {"message": "Not Found"})
                release_id = int(m.group(1))
                name = query.get("name", [""])[0]
                length = int(self.headers.get("Content-Length") or 0)
                if any(a["name"] == name for a in state.assets.get(release_id, [])):
                    self.rfile.read(length)
                    return self.send_json(422, {"message": "Validation Failed", "errors": [
                        {"resource": "ReleaseAsset", "code": "already_exists", "field": "name"}]})
                if kind == "partial":
                    data = self.rfile.read(length // 2)
                    state.add_asset(release_id, name, data, state="starter")
                    self.close_connection = True
                    self.connection.close()
                    return
                if kind == "slow":  # a slow link: the body at about 100 KB/s
                    data = b""
                    while len(data) < length:
                        chunk = self.rfile.read(min(10_000, length - len(data)))
                        if not chunk:
                            break
                        data += chunk
                        time.sleep(0.1)
                else:
                    data = self.rfile.read(length)
                if len(data) < length:
                    # The client went away mid-body: GitHub keeps such an upload as "starter".
                    state.add_asset(release_id, name, data, state="starter")
                    self.close_connection = True
                    return
                asset = state.add_asset(release_id, name, data)
                if kind == "store_502":
                    return self.send_json(502, {"message": "Bad Gateway"})
                return self.send_json(201, state.asset_json(asset))

            if self.command == "GET" and rest.startswith("/releases/tags/"):
                tag = rest[len("/releases/tags/"):]
                for r in state.releases:
                    if r["tag_name"] == tag and not r["draft"]:
                        return self.send_json(200, state.release_json(r))
                return self.send_json(404, {"message": "Not Found"})
            if self.command == "GET" and rest == "/releases":
                items = [state.release_json(r) for r in reversed(state.releases)]
                chunk, headers = self.paginate(items, f"{state.prefix}/repos/{state.repo}/releases", query)
                return self.send_json(200, chunk, headers)
            if self.command == "POST" and rest == "/releases":
                doc = json.loads(self.read_body() or b"{}")
                if any(r["tag_name"] == doc.get("tag_name") for r in state.releases):
                    return self.send_json(422, {"message": "Validation Failed", "errors": [
                        {"resource": "Release", "code": "already_exists", "field": "tag_name"}]})
                r = {"id": state.new_id(), "tag_name": doc["tag_name"], "name": doc.get("name"),
                     "body": doc.get("body"), "draft": bool(doc.get("draft"))}
                state.releases.append(r)
                return self.send_json(201, state.release_json(r))
            if self.command == "GET" and m:
                items = [state.asset_json(a) for a in state.assets.get(int(m.group(1)), [])]
                chunk, headers = self.paginate(
                    items, f"{state.prefix}/repos/{state.repo}/releases/{m.group(1)}/assets", query)
                return self.send_json(200, chunk, headers)
            d = re.fullmatch(r"/releases/assets/(\d+)", rest)
            if self.command == "DELETE" and d:
                for rid, assets in state.assets.items():
                    for a in assets:
                        if a["id"] == int(d.group(1)):
                            assets.remove(a)
                            state.log.append((self.command, self.path, 204))
                            self.send_response(204)
                            self.send_header("Content-Length", "0")
                            self.end_headers()
                            return
                return self.send_json(404, {"message": "Not Found"})
            self.read_body()
            return self.send_json(404, {"message": "Not Found"})

        do_GET = do_POST = do_DELETE = do_PATCH = handle_any

    return Handler


def start(token, repo, prefix=""):
    """Starts the API and upload servers on free loopback ports; returns (state, stop)."""
    state = State(token, repo, prefix)
    api = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(state))
    uploads = ThreadingHTTPServer(("127.0.0.1", 0), make_elsewhere_handler(state))  # "elsewhere"
    for s in (api, uploads):
        s.daemon_threads = True
    state.api_base = f"http://127.0.0.1:{api.server_address[1]}{prefix}"
    state.upload_base = f"http://127.0.0.1:{api.server_address[1]}{UPLOADS}"
    state.elsewhere_base = f"http://127.0.0.1:{uploads.server_address[1]}"
    threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in (api, uploads)]
    for t in threads:
        t.start()

    def stop():
        for s in (api, uploads):
            s.shutdown()
            s.server_close()

    return state, stop
