#!/usr/bin/env python3
"""The universal wheel through sagebuild index and real pip, as a user meets it:

- the CUDA-13 index (<site>/cu13/simple) holds the universal wheel and the per-torch wheel of an
  older torch (2.9), each under its variant's local version (2.2.0+cu130, 2.2.0+cu130torch2.9:
  pip weighs one file per version), not the per-torch 2.11 wheel, which the universal one
  replaces there;
- `pip install sageattention` from it into environments that already have torch (2.11, and the
  newest torch on PyPI) installs the universal wheel and leaves torch as it is;
- with torch 2.9 asked for, pip takes the per-torch 2.9 wheel;
- the universal wheel with torch 2.9 is refused by pip (Requires-Dist: torch>=2.10).

Every environment is a whole torch install from PyPI (scripts/python-env.sh), since pip weighs an
installed torch's own requirements too. The per-torch 2.9 wheel is made here with its real
name, metadata and provenance but no binary (so `index --no-verify`): what is under test is pip's
choice.

Usage: universal_index_check.py SAGEBUILD UNIVERSAL_WHEEL PER_TORCH_WHEEL TORCH29_PYTHON PYTHON...
(PYTHON: interpreters of environments with torch >= 2.10 installed)
"""
import base64
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import zipfile

from checklib import check, finish, free_port


def per_torch_29_wheel(directory):
    name = "sageattention-2.2.0-290.130-cp312-cp312-manylinux_2_28_x86_64.whl"
    dist = "sageattention-2.2.0.dist-info"
    files = {
        "sageattention/__init__.py": b"BUILT_FOR = 'torch 2.9'\n",
        f"{dist}/METADATA": b"Metadata-Version: 2.1\nName: sageattention\nVersion: 2.2.0\n"
                            b"Requires-Python: >=3.9\nRequires-Dist: torch==2.9.*\n",
        f"{dist}/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: false\n"
                         b"Tag: cp312-cp312-manylinux_2_28_x86_64\nBuild: 290.130\n",
        f"{dist}/sagebuild.json": json.dumps({
            "schema": 1, "sagebuild": "0.1.0", "package": "sageattention", "version": "2.2.0",
            "torch": "2.9.0", "abi": "per-torch", "cuda": "13.0.88", "python": "3.12",
            "platform_tag": "manylinux_2_28_x86_64", "archs": ["9.0a"]}).encode(),
    }
    record = "".join(f"{p},sha256={base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b'=').decode()},{len(d)}\n"
                     for p, d in files.items()) + f"{dist}/RECORD,,\n"
    with zipfile.ZipFile(os.path.join(directory, name), "w") as z:
        for p, d in files.items():
            z.writestr(p, d)
        z.writestr(f"{dist}/RECORD", record)
    return name


def pip(python, *args, timeout=600):
    return subprocess.run([python, "-m", "pip", "--disable-pip-version-check", *args],
                          capture_output=True, text=True, timeout=timeout)


def chosen(report_text):
    from urllib.parse import unquote
    report = json.loads(report_text)
    return {unquote(os.path.basename(item["download_info"]["url"])) for item in report["install"]}


def main():
    sagebuild, universal, per_torch, torch29, *pythons = sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        dist = os.path.join(tmp, "dist")
        os.makedirs(dist)
        shutil.copy(universal, dist)
        shutil.copy(per_torch, dist)
        old = per_torch_29_wheel(dist)
        site = os.path.join(tmp, "site")
        done = subprocess.run([sagebuild, "index", "--no-verify", dist, "--out", site], capture_output=True, text=True)
        check("sagebuild index writes the CUDA-13 index", done.returncode == 0 and "cu13/simple" in done.stdout,
              done.stdout + done.stderr)
        listed = sorted(f["filename"] for f in json.load(open(os.path.join(site, "cu13", "simple", "sageattention",
                                                                         "index.json")))["files"])
        local = os.path.basename(universal).replace("-2.2.0-", "-2.2.0+cu130-", 1)
        old = old.replace("-2.2.0-", "-2.2.0+cu130torch2.9-", 1)
        want = sorted([local, old])
        check("cu13/simple holds the universal wheel and the older torch's per-torch wheel, not 2.11's",
              listed == want, f"{listed}")
        port = free_port()
        server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
                                   "--directory", site], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        index = f"http://127.0.0.1:{port}/cu13/simple"
        try:
            for _ in range(50):  # wait until it listens (bounded)
                with socket.socket() as s:
                    if s.connect_ex(("127.0.0.1", port)) == 0:
                        break
                time.sleep(0.1)
            for python in pythons:
                torch_before = subprocess.run([python, "-c", "import importlib.metadata as m; print(m.version('torch'))"],
                                              capture_output=True, text=True).stdout.strip()
                report = os.path.join(tmp, "report.json")
                done = pip(python, "install", "--index-url", index, "--report", report, "sageattention")
                got = chosen(open(report).read()) if done.returncode == 0 else set()
                torch_after = subprocess.run([python, "-c", "import importlib.metadata as m; print(m.version('torch'))"],
                                             capture_output=True, text=True).stdout.strip()
                check(f"torch {torch_before}: pip install from cu13/simple takes the universal wheel, torch stays",
                      got == {local} and torch_after == torch_before,
                      f"{got} torch {torch_after}\n{done.stdout[-800:]}{done.stderr[-800:]}")
                pip(python, "uninstall", "-y", "sageattention")
            # torch 2.9 installed: the per-torch wheel; the universal one is refused.
            report = os.path.join(tmp, "report29.json")
            done = pip(torch29, "install", "--index-url", index, "--report", report, "--no-warn-conflicts",
                       "sageattention")
            got = chosen(open(report).read()) if done.returncode == 0 else set()
            check("torch 2.9: pip install from cu13/simple takes the per-torch 2.9 wheel",
                  got == {old}, f"{got}\n{done.stdout[-800:]}{done.stderr[-800:]}")
            pip(torch29, "uninstall", "-y", "sageattention")
        finally:
            server.terminate()
            server.wait(timeout=10)
        done = pip(torch29, "install", "--no-index", universal)
        check("pip refuses the universal wheel with torch 2.9 installed (Requires-Dist torch>=2.10)",
              done.returncode != 0 and "torch>=2.10" in (done.stdout + done.stderr),
              done.stdout[-600:] + done.stderr[-600:])
    return finish("universal index")


if __name__ == "__main__":
    sys.exit(main())
