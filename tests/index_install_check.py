#!/usr/bin/env python3
"""sagebuild index, served by python -m http.server on 127.0.0.1 and installed from with real pip:
two wheels of one version built for two torch/CUDA variants; each variant's index must give its
own wheel, the combined index must list both, and the PEP 691 JSON must match the HTML.

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


def main():
    sagebuild = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        dist = os.path.join(tmp, "dist")
        os.makedirs(dist)
        w28 = make_wheel(dist, "2.8.0", "12.9.1", "280.129")
        w27 = make_wheel(dist, "2.7.0", "12.8.1", "270.128")
        site = os.path.join(tmp, "site")
        subprocess.run([sagebuild, "index", dist, "--out", site], check=True)
        port = free_port()
        server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
                                   "--directory", site], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(50):  # wait until it listens (bounded)
                with socket.socket() as s:
                    if s.connect_ex(("127.0.0.1", port)) == 0:
                        break
                time.sleep(0.1)
            for variant, want in (("torch2.8-cu129", w28), ("torch2.7-cu128", w27)):
                out = os.path.join(tmp, variant)
                done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
                                       "--disable-pip-version-check", "--no-cache-dir",
                                       "--index-url", f"http://127.0.0.1:{port}/{variant}/simple",
                                       "--only-binary=:all:", "--python-version", "3.12",
                                       "--platform", "linux_x86_64", "-d", out, "sageattention==2.2.0"],
                                      capture_output=True, text=True, timeout=120)
                got = os.listdir(out) if os.path.isdir(out) else []
                check(f"pip from {variant}/simple gets {want}", done.returncode == 0 and got == [want],
                      f"got {got} {done.stderr.strip()[-200:]}")
        finally:
            server.terminate()
            server.wait(timeout=10)
        combined = json.load(open(os.path.join(site, "simple", "sageattention", "index.json")))
        names = sorted(f["filename"] for f in combined["files"])
        html = open(os.path.join(site, "simple", "sageattention", "index.html")).read()
        check("the combined index lists both wheels; JSON and HTML agree",
              names == sorted([w27, w28]) and all(n in html for n in names)
              and 'data-requires-python="&gt;=3.9"' in html, f"{names}")
    return finish("index install")


if __name__ == "__main__":
    sys.exit(main())
