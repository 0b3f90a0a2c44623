#!/usr/bin/env python3
"""sagebuild publish --attestations (PEP 740) end to end, with real attestations: the pairs of a
wheel and its Sigstore-signed `.publish.attestation` that pypi-attestations keeps as its own test
data (its sdist, fetched by scripts/install-python-tools.sh into build/pytools/assets), uploaded
to a registry on 127.0.0.1 that records each request as the upload API receives it. Then:

- the upload carries the attestation in the `attestations` field, byte for byte as signed, and
  pypi-attestations itself (`verify attestation --offline`, Sigstore's staging trust root, which
  signed these) verifies what the registry received against the file it received;
- a file whose attestation names another file (as one renamed after it was attested), another
  build of the same name (other bytes), or none at all is not uploaded: the registry sees no
  request for it, the message says what is wrong and how to make one, and the exit code is 6;
- `--dry-run --attestations` checks the same without contacting the server.

Usage: attestation_check.py SAGEBUILD PYTOOLS_BIN_DIR. Exits 77 (skipped) without the assets.
"""
import base64
import email.parser
import email.policy
import glob
import hashlib
import http.server
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checklib import check, finish, free_port  # noqa: E402

# The asset pair and the identity its certificate names (pypi-attestations' own tests say so).
WHEEL = "rfc8785-0.1.2-py3-none-any.whl"
OTHER = "circleci_sign_publish_example-0.0.1.dev137-py3-none-any.whl"
IDENTITY = "william@yossarian.net"
PUBLISH_FAILURE = 6  # docs/cli.md: release or publish failure


class Registry(http.server.BaseHTTPRequestHandler):
    """Accepts every upload and keeps its form fields (files as bytes)."""
    received = []

    def do_POST(self):  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + self.headers["Content-Type"].encode() + b"\r\n\r\n" + body)
        fields = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            fields[name] = part.get_payload(decode=True)
        Registry.received.append(fields)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


def assets(pytools):
    """The sdist's test data: {file name: path} of the wheels and their attestations."""
    sdists = glob.glob(os.path.join(os.path.dirname(pytools), "assets", "pypi_attestations-*.tar.gz"))
    if not sdists:
        return None
    out = tempfile.mkdtemp(prefix="attestation-assets-")
    with tarfile.open(sdists[0]) as tar:
        for member in tar.getmembers():
            name = os.path.basename(member.name)
            if "/test/assets/" in member.name and name.startswith((WHEEL, OTHER)) and member.isfile():
                with open(os.path.join(out, name), "wb") as f:
                    f.write(tar.extractfile(member).read())
    return out


def labelled_copies(sb, url, env, tmp, signed):
    """--local-labels --attestations: each wheel is uploaded as a labelled copy made in a temporary
    folder; its attestation, made of the copy `--delivered-dir` kept, is found there. The
    attestation here is the real one with its statement's subject changed to name the labelled
    copy (its signature no longer matches: the registry, not sagebuild, checks signatures; what
    is under test is that the attestation made for the delivered copy travels with it)."""
    from index_install_check import make_wheel
    dist, delivered = os.path.join(tmp, "labelled-dist"), os.path.join(tmp, "delivered")
    os.makedirs(dist)
    wheel = os.path.join(dist, make_wheel(dist, "2.8.0", "12.9.1", "280.129"))
    common = [sb, "publish", "--repository-url", url, "--no-verify", "--local-labels",
              "--delivered-dir", delivered, "--retry-wait", "0.1"]
    done = subprocess.run([*common, "--dry-run", wheel], capture_output=True, text=True, env=env, timeout=120)
    copies = os.listdir(delivered) if os.path.isdir(delivered) else []
    check("--dry-run --local-labels --delivered-dir keeps the labelled copy to attest",
          done.returncode == 0 and len(copies) == 1 and "+cu129torch2.8" in copies[0],
          done.stdout + done.stderr)
    if len(copies) != 1:
        return
    copy = os.path.join(delivered, copies[0])
    attestation = json.loads(signed)
    statement = json.loads(base64.b64decode(attestation["envelope"]["statement"]))
    statement["subject"] = [{"name": copies[0],
                             "digest": {"sha256": hashlib.sha256(open(copy, "rb").read()).hexdigest()}}]
    attestation["envelope"]["statement"] = base64.b64encode(json.dumps(statement).encode()).decode()
    made = json.dumps(attestation).encode()
    with open(copy + ".publish.attestation", "wb") as f:
        f.write(made)
    before = len(Registry.received)
    done = subprocess.run([*common, "--attestations", wheel], capture_output=True, text=True, env=env,
                          timeout=120)
    fields = Registry.received[-1] if len(Registry.received) > before else {}
    check("--local-labels --attestations uploads the labelled copy with the attestation made of it",
          done.returncode == 0 and fields.get("attestations") == b"[" + made + b"]"
          and hashlib.sha256(fields.get("content", b"")).hexdigest()
          == hashlib.sha256(open(copy, "rb").read()).hexdigest(),
          done.stdout + done.stderr)


def main():
    sb, pytools = os.path.abspath(sys.argv[1]), sys.argv[2]
    found = assets(pytools)
    if found is None:
        print("attestation_check: no pypi-attestations sdist in build/pytools/assets "
              "(scripts/install-python-tools.sh fetches it): skipped")
        return 77
    port = free_port()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Registry)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{port}/legacy/"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TWINE_", "SAGEBUILD_PUBLISH_"))}
    env.update(TWINE_USERNAME="__token__", TWINE_PASSWORD="pypi-test")

    def publish(*args):
        return subprocess.run([sb, "publish", "--repository-url", url, "--no-verify", "--attestations",
                               "--retry-wait", "0.1", *args], capture_output=True, text=True, env=env,
                              timeout=120)

    tmp = tempfile.mkdtemp(prefix="attestation-check-")
    try:
        wheel = os.path.join(tmp, WHEEL)
        shutil.copy(os.path.join(found, WHEEL), wheel)
        shutil.copy(os.path.join(found, WHEEL + ".publish.attestation"), wheel + ".publish.attestation")
        signed = open(wheel + ".publish.attestation", "rb").read().strip()

        done = publish(wheel)
        fields = Registry.received[-1] if Registry.received else {}
        check("a wheel and its attestation are uploaded", done.returncode == 0 and len(Registry.received) == 1,
              done.stdout + done.stderr)
        sent = fields.get("attestations", b"")
        check("the attestations field holds the signer's bytes in a JSON array",
              sent == b"[" + signed + b"]" and len(json.loads(sent)) == 1, sent[:300])
        content = fields.get("content", b"")
        check("the file sent is the file attested (sha256_digest and content)",
              hashlib.sha256(content).hexdigest() == fields.get("sha256_digest", b"").decode()
              == hashlib.sha256(open(wheel, "rb").read()).hexdigest())

        # What the registry received, checked by pypi-attestations against what it received.
        received = os.path.join(tmp, "received")
        os.makedirs(received)
        with open(os.path.join(received, WHEEL), "wb") as f:
            f.write(content)
        with open(os.path.join(received, WHEEL + ".publish.attestation"), "wb") as f:
            f.write(json.dumps(json.loads(sent)[0]).encode())
        verified = subprocess.run([os.path.join(pytools, "pypi-attestations"), "verify", "attestation",
                                   "--staging", "--offline", "--identity", IDENTITY,
                                   os.path.join(received, WHEEL)], capture_output=True, text=True, timeout=120)
        check("pypi-attestations verifies the received attestation against the received file (offline)",
              verified.returncode == 0 and "OK:" in verified.stdout + verified.stderr,
              verified.stdout + verified.stderr)

        # Refusals: nothing reaches the registry.
        before = len(Registry.received)
        other_dir = os.path.join(tmp, "other")
        os.makedirs(other_dir)
        other = os.path.join(other_dir, OTHER)
        shutil.copy(os.path.join(found, OTHER), other)
        shutil.copy(wheel + ".publish.attestation", other + ".publish.attestation")
        done = publish(other)
        text = done.stdout + done.stderr
        check("an attestation of another file (one renamed since it was attested) is refused "
              "before upload", done.returncode == PUBLISH_FAILURE and f"it attests '{WHEEL}'" in text
              and len(Registry.received) == before, text)

        # The same wheel packed again (stored, not deflated): a valid wheel of the same name
        # whose bytes are not the ones attested.
        rebuilt_dir = os.path.join(tmp, "rebuilt")
        os.makedirs(rebuilt_dir)
        rebuilt = os.path.join(rebuilt_dir, WHEEL)
        with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(rebuilt, "w", zipfile.ZIP_STORED) as dst:
            for info in src.infolist():
                dst.writestr(info.filename, src.read(info))
        shutil.copy(wheel + ".publish.attestation", rebuilt + ".publish.attestation")
        done = publish(rebuilt)
        text = done.stdout + done.stderr
        check("an attestation of another build of the same name is refused, naming both digests",
              done.returncode == PUBLISH_FAILURE and "it attests sha256" in text
              and hashlib.sha256(open(rebuilt, "rb").read()).hexdigest() in text
              and len(Registry.received) == before, text)

        bare = os.path.join(tmp, "bare")
        os.makedirs(bare)
        shutil.copy(os.path.join(found, OTHER), bare)
        done = publish(os.path.join(bare, OTHER))
        text = done.stdout + done.stderr
        check("a file without an attestation is refused, saying how to make one",
              done.returncode == PUBLISH_FAILURE and "no attestation" in text
              and "pypi-attestations sign" in text and len(Registry.received) == before, text)

        done = publish("--dry-run", wheel, os.path.join(bare, OTHER))
        text = done.stdout + done.stderr
        check("--dry-run --attestations checks each file's attestation and contacts no server",
              done.returncode == PUBLISH_FAILURE and "attestation names it" in text
              and "no attestation" in text and len(Registry.received) == before, text)

        labelled_copies(sb, url, env, tmp, signed)
    finally:
        server.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(found, ignore_errors=True)
    return finish("attestation_check")


if __name__ == "__main__":
    sys.exit(main())
