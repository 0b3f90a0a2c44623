#!/usr/bin/env python3
"""sagebuild index, served by python -m http.server on 127.0.0.1 and installed from with real pip:
two wheels of one version built for two torch/CUDA variants; each is served under its variant's
local version (2.2.0+cu129torch2.8), each variant's index must give its own wheel, the combined
index must list both, and the PEP 691 JSON must match the HTML.

Usage: index_install_check.py SAGEBUILD
"""
import base64
import hashlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import zipfile

from checklib import check, finish, free_port


def make_wheel(directory, torch, cuda, tag):
    name = f"sageattention-2.2.0-{tag}-cp312-cp312-linux_x86_64.whl"
    dist = "sageattention-2.2.0.dist-info"
    files = {
        "sageattention/__init__.py": f"BUILT_FOR = '{torch}+cu{cuda}'\n".encode(),
        f"{dist}/METADATA": b"Metadata-Version: 2.1\nName: sageattention\nVersion: 2.2.0\nRequires-Python: >=3.9\n",
        f"{dist}/WHEEL": f"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp312-cp312-linux_x86_64\nBuild: {tag}\n".encode(),
        f"{dist}/sagebuild.json": json.dumps({"schema": 1, "sagebuild": "0.1.0", "package": "sageattention",
                                              "version": "2.2.0", "torch": torch, "cuda": cuda, "python": "3.12",
                                              "platform_tag": "linux_x86_64", "archs": ["9.0a"]}).encode(),
    }
    record = "".join(f"{p},sha256={base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b'=').decode()},{len(d)}\n"
                     for p, d in files.items()) + f"{dist}/RECORD,,\n"
    with zipfile.ZipFile(os.path.join(directory, name), "w") as z:
        for p, d in files.items():
            z.writestr(p, d)
        z.writestr(f"{dist}/RECORD", record)
    return name


def listing(path):
    return sorted(os.path.relpath(os.path.join(r, n), path) for r, _, ns in os.walk(path) for n in ns)


def never_loses_data(sagebuild, tmp, dist, site):
    """index -o replaces only an index it wrote: never a file, a folder of other files, the input
    folder; two different wheels of one name are an error; a failure leaves nothing behind."""
    def index(*args):
        return subprocess.run([sagebuild, "index", "--no-verify", *args], capture_output=True, text=True)

    again = index(dist, "--out", site)
    check("an index is replaced by the next run", again.returncode == 0, again.stderr)
    docs = os.path.join(tmp, "docs")
    os.makedirs(docs)
    open(os.path.join(docs, "guide.md"), "w").write("mine\n")
    note = os.path.join(tmp, "note.txt")
    open(note, "w").write("mine\n")
    with open(os.path.join(dist, "sageattention-2.2.0.tar.gz"), "wb") as f:
        f.write(b"an sdist")
    before = {p: listing(p) for p in (docs, dist)}
    for label, target in (("a folder of other files", docs), ("the input folder", dist),
                          ("an existing file", note)):
        done = index(dist, "--out", target)
        kept = listing(target) == before[target] if os.path.isdir(target) else open(target).read() == "mine\n"
        check(f"index -o {label}: refused, nothing touched", done.returncode != 0 and kept
              and "sagebuild: error" in done.stderr, done.stderr[-300:])
    here = subprocess.run([os.path.abspath(sagebuild), "index", "--no-verify", dist, "--out", "."], capture_output=True, text=True, cwd=tmp)
    check("index -o . (a folder of other things): refused, no .partial left behind",
          here.returncode != 0 and not [n for n in os.listdir(tmp) if ".partial" in n], here.stderr[-300:])
    other = os.path.join(tmp, "other")
    os.makedirs(other)
    w = make_wheel(other, "2.8.0", "12.9.1", "280.129")
    with zipfile.ZipFile(os.path.join(other, w), "a") as z:
        z.writestr("sageattention/extra.py", "x = 1\n")
    twice = index(dist, other, "--out", os.path.join(tmp, "site2"))
    check("two different wheels of one name: an error naming both, no index written",
          twice.returncode != 0 and "two different wheels named" in twice.stderr
          and not os.path.exists(os.path.join(tmp, "site2")), twice.stderr[-300:])


def refuses_unverified(sagebuild, tmp, dist):
    """index verifies every input as release and publish do: the stand-ins (no binary) are
    refused with exit 5 and no site written; a wheel changed after it was made (its RECORD no
    longer vouches for __init__.py) is refused even with --no-verify, so that no labelled copy
    with a fresh RECORD over unverified content exists."""
    site = os.path.join(tmp, "unverified-site")
    done = subprocess.run([sagebuild, "index", dist, "--out", site], capture_output=True, text=True)
    check("index refuses wheels verify-wheel refuses (exit 5), nothing written",
          done.returncode == 5 and "nothing indexed" in done.stderr and not os.path.exists(site),
          done.stderr[-400:])
    tampered = os.path.join(tmp, "tampered")
    os.makedirs(tampered)
    name = make_wheel(tampered, "2.8.0", "12.9.1", "280.129")
    path = os.path.join(tampered, name)
    with zipfile.ZipFile(path) as z:
        members = {i.filename: z.read(i) for i in z.infolist()}
    members["sageattention/__init__.py"] = b"import os  # changed after the build\n"
    with zipfile.ZipFile(path, "w") as z:
        for member, data in members.items():
            z.writestr(member, data)
    for flags in ([], ["--no-verify"]):
        done = subprocess.run([sagebuild, "index", *flags, tampered, "--out", site], capture_output=True, text=True)
        check(f"index {' '.join(flags)}: a wheel changed after it was made is refused, no copy of it",
              done.returncode != 0 and not os.path.exists(site)
              and ("R002" in done.stderr or "not what its RECORD vouches for" in done.stderr),
              done.stderr[-400:])


def main():
    sagebuild = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        dist = os.path.join(tmp, "dist")
        os.makedirs(dist)
        w28 = make_wheel(dist, "2.8.0", "12.9.1", "280.129")
        w27 = make_wheel(dist, "2.7.0", "12.8.1", "270.128")
        site = os.path.join(tmp, "site")
        refuses_unverified(sagebuild, tmp, dist)
        # The stand-ins hold no binary (verify-wheel refuses them): what is under test is pip.
        subprocess.run([sagebuild, "index", "--no-verify", dist, "--out", site], check=True)
        labelled = {w28: w28.replace("-2.2.0-", "-2.2.0+cu129torch2.8-"),
                    w27: w27.replace("-2.2.0-", "-2.2.0+cu128torch2.7-")}
        port = free_port()
        server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
                                   "--directory", site], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(50):  # wait until it listens (bounded)
                with socket.socket() as s:
                    if s.connect_ex(("127.0.0.1", port)) == 0:
                        break
                time.sleep(0.1)
            for variant, want in (("cu129torch2.8", w28), ("cu128torch2.7", w27)):
                out = os.path.join(tmp, variant)
                done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
                                       "--disable-pip-version-check", "--no-cache-dir",
                                       "--index-url", f"http://127.0.0.1:{port}/{variant}/simple",
                                       "--only-binary=:all:", "--python-version", "3.12",
                                       "--platform", "linux_x86_64", "-d", out, "sageattention==2.2.0"],
                                      capture_output=True, text=True, timeout=120)
                got = os.listdir(out) if os.path.isdir(out) else []
                check(f"pip from {variant}/simple gets {labelled[want]}", done.returncode == 0
                      and got == [labelled[want]],
                      f"got {got} {done.stderr.strip()[-200:]}")
        finally:
            server.terminate()
            server.wait(timeout=10)
        combined = json.load(open(os.path.join(site, "simple", "sageattention", "index.json")))
        names = sorted(f["filename"] for f in combined["files"])
        html = open(os.path.join(site, "simple", "sageattention", "index.html")).read()
        check("the combined index lists both wheels; JSON and HTML agree",
              names == sorted(labelled.values()) and all(n in html for n in names)
              and 'data-requires-python="&gt;=3.9"' in html, f"{names}")
        never_loses_data(sagebuild, tmp, dist, site)
    return finish("index install")


if __name__ == "__main__":
    sys.exit(main())
