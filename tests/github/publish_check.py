#!/usr/bin/env python3
"""sagebuild publish against a real pypiserver on 127.0.0.1 (with htpasswd authentication), then a
real `pip install --index-url` from it: a set pip could not resolve refused, variants uploaded under
their local labels, re-runs that skip files already there (same sha256), a different file of the
same name refused with both digests, an unverified wheel refused, --dry-run, wrong credentials
(the files after the first refused one not sent),
~/.netrc credentials, local versions refused unless allowed. The password must appear in no output.

Usage: publish_check.py SAGEBUILD PYTOOLS_BIN_DIR
"""
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from index_install_check import make_wheel  # noqa: E402  (one wheel maker for the index tests)
from checklib import check, finish, free_port, write_wheel  # noqa: E402

USER = "publisher"
PASSWORD = "pypi-FAKEpassword0123456789SECRET"
outputs = []


def publish(sb, url, *files, env_extra=None, creds=True, flags=("--no-verify",)):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TWINE_", "SAGEBUILD_PUBLISH_", "NETRC"))}
    env["HOME"] = env.get("PUBLISH_TEST_HOME", env.get("HOME", "/"))
    if creds:
        env.update({"TWINE_USERNAME": USER, "TWINE_PASSWORD": PASSWORD})
    env.update(env_extra or {})
    done = subprocess.run([sb, "publish", "--repository-url", url, "--retry-wait", "0.1",
                           *flags, *files], capture_output=True, text=True, env=env, timeout=300)
    outputs.append(done.stdout + done.stderr)
    return done


def local_version_wheel(directory):
    """A minimal, consistent wheel whose version has a local label."""
    version = "2.2.0+g0123abc"
    dist = f"localdemo-{version}.dist-info"
    files = {
        "localdemo/__init__.py": b"",
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: localdemo\nVersion: {version}\n".encode(),
        f"{dist}/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    return write_wheel(os.path.join(directory, f"localdemo-{version}-py3-none-any.whl"), dist, files)


def redirected_upload(sb):
    """A registry that answers the upload with 307 to another host: not followed (a client that
    follows re-sends a GET there and takes its 200 for an upload), an error naming the redirect,
    and nothing and no credential sent to the other host."""
    seen = []

    class Target(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_any(self):
            seen.append((self.command, self.headers.get("Authorization")))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST = do_any

    target = ThreadingHTTPServer(("127.0.0.1", 0), Target)
    elsewhere = f"http://127.0.0.1:{target.server_address[1]}/legacy/"

    class Redirect(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(307)
            self.send_header("Location", elsewhere)
            self.send_header("Content-Length", "0")
            self.end_headers()

    registry = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    for server in (target, registry):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            wheel = os.path.join(tmp, make_wheel(tmp, "2.8.0", "12.9.1", "280.129"))
            done = publish(sb, f"http://127.0.0.1:{registry.server_address[1]}/legacy/", wheel,
                           flags=("--no-verify", "--retries", "0"))
            check("an upload redirected to another host: not followed, an error, nothing sent there",
                  done.returncode == 6 and "redirected" in done.stdout + done.stderr and not seen,
                  f"exit {done.returncode} {seen}\n{done.stdout}{done.stderr}")
    finally:
        for server in (target, registry):
            server.shutdown()
            server.server_close()


def main():
    sb, pytools = sys.argv[1], sys.argv[2]
    python = os.path.join(pytools, "python")
    with tempfile.TemporaryDirectory() as tmp:
        dist = os.path.join(tmp, "dist")
        os.makedirs(dist)
        w28 = os.path.join(dist, make_wheel(dist, "2.8.0", "12.9.1", "280.129"))
        w27 = os.path.join(dist, make_wheel(dist, "2.7.0", "12.8.1", "270.128"))
        renamed = local_version_wheel(tmp)

        htpasswd = os.path.join(tmp, "htpasswd")
        subprocess.run([python, "-c", "import sys; from passlib.apache import HtpasswdFile; "
                        "h = HtpasswdFile(sys.argv[1], new=True); h.set_password(sys.argv[2], sys.argv[3]); h.save()",
                        htpasswd, USER, PASSWORD], check=True)
        packages = os.path.join(tmp, "packages")
        os.makedirs(packages)
        port = free_port()
        url = f"http://127.0.0.1:{port}/"
        server = subprocess.Popen([os.path.join(pytools, "pypi-server"), "run", "-p", str(port), "-i", "127.0.0.1",
                                   "-P", htpasswd, "-a", "update", "--disable-fallback", packages],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(100):  # wait until it answers (bounded)
                try:
                    urllib.request.urlopen(url + "simple/", timeout=1)
                    break
                except OSError:
                    time.sleep(0.1)

            done = publish(sb, url, w28, w27)
            check("two variants of one version for one Python: refused, nothing uploaded",
                  done.returncode == 6 and "could not resolve" in done.stderr and "--local-labels" in done.stderr
                  and not os.listdir(packages), done.stdout + done.stderr)

            done = publish(sb, url, w28, w27, flags=("--no-verify", "--dry-run", "--local-labels"))
            check("--dry-run: the labelled names, nothing uploaded", done.returncode == 0
                  and "sageattention-2.2.0+cu129torch2.8-280.129-cp312" in done.stdout and not os.listdir(packages),
                  done.stdout + done.stderr)

            done = publish(sb, url, w28, flags=())
            check("a wheel that fails verification: exit 5, nothing uploaded", done.returncode == 5
                  and "--no-verify" in done.stderr and not os.listdir(packages), done.stdout + done.stderr)

            labelled = ["sageattention-2.2.0+cu128torch2.7-270.128-cp312-cp312-linux_x86_64.whl",
                        "sageattention-2.2.0+cu129torch2.8-280.129-cp312-cp312-linux_x86_64.whl"]
            done = publish(sb, url, w28, w27, flags=("--no-verify", "--local-labels"))
            check("--local-labels uploads each variant under its local version", done.returncode == 0
                  and done.stdout.count("uploaded") == 2 and sorted(os.listdir(packages)) == labelled,
                  done.stdout + done.stderr + f"{os.listdir(packages)}")

            done = publish(sb, url, w28, w27, flags=("--no-verify", "--local-labels"))
            check("a re-run skips files already there with the same sha256", done.returncode == 0
                  and done.stdout.count("same sha256") == 2, done.stdout + done.stderr)

            other = os.path.join(tmp, "other")
            os.makedirs(other)
            w28b = os.path.join(other, make_wheel(other, "2.8.0", "12.9.2", "280.129"))
            done = publish(sb, url, w28b, flags=("--no-verify", "--local-labels"))
            refusal = [line for line in done.stdout.splitlines() if "different file" in line]
            passed = hashlib.sha256(open(w28b, "rb").read()).hexdigest()
            check("a different file of the same name: exit 6 naming both digests, then the file "
                  "passed and its own", done.returncode == 6 and len(refusal) == 1
                  and len(set(re.findall(r"\b[0-9a-f]{64}\b", refusal[0]))) == 2
                  and f"is the labelled copy of {w28b} (that file: sha256 {passed}" in done.stdout,
                  done.stdout + done.stderr)

            done = publish(sb, url, w28, creds=False,
                           env_extra={"TWINE_USERNAME": USER, "TWINE_PASSWORD": "wrong-" + PASSWORD})
            check("wrong credentials: exit 6 with advice", done.returncode == 6
                  and "credentials" in done.stdout, done.stdout + done.stderr)
            done = publish(sb, url, w28, w27, creds=False, flags=("--no-verify", "--local-labels"),
                           env_extra={"TWINE_USERNAME": USER, "TWINE_PASSWORD": "wrong-" + PASSWORD})
            check("wrong credentials for two files: the first refused, the second not sent",
                  done.returncode == 6 and len(re.findall(r"HTTP 40[13]", done.stdout)) == 2
                  and "not sent: the registry refused the credentials" in done.stdout,
                  done.stdout + done.stderr)

            done = publish(sb, url, renamed)
            check("a local version is refused by default", done.returncode == 6
                  and "--allow-local-versions" in done.stdout, done.stdout + done.stderr)

            netrc = os.path.join(tmp, "netrc")
            with open(netrc, "w") as f:
                f.write(f"machine 127.0.0.1\nlogin {USER}\npassword {PASSWORD}\n")
            os.chmod(netrc, 0o600)
            done = publish(sb, url, renamed, creds=False, env_extra={"NETRC": netrc},
                           flags=("--no-verify", "--allow-local-versions"))
            check("credentials from a netrc file; --allow-local-versions", done.returncode == 0
                  and "uploaded" in done.stdout, done.stdout + done.stderr)

            target = os.path.join(tmp, "installed")
            # The wheels are cp312; this pip may run on another Python, so it is told the target's.
            pip = subprocess.run([python, "-m", "pip", "install", "--disable-pip-version-check", "--no-deps",
                                  "--python-version", "3.12", "--platform", "linux_x86_64",
                                  "--only-binary=:all:", "--isolated",
                                  "--index-url", url + "simple/", "--target", target,
                                  "sageattention==2.2.0"], capture_output=True, text=True)
            init = os.path.join(target, "sageattention", "__init__.py")
            text = open(init).read() if os.path.exists(init) else ""
            check("pip installs from the registry (the highest local version: torch 2.8)",
                  pip.returncode == 0 and "2.8.0+cu12.9.1" in text, pip.stdout + pip.stderr + text)
        finally:
            server.terminate()
            server.wait(timeout=30)

    redirected_upload(sb)
    leaked = [i for i, t in enumerate(outputs) if PASSWORD in t]
    check("the password appears in no output", not leaked, f"runs {leaked}")
    return finish("publish checks")


if __name__ == "__main__":
    sys.exit(main())
