#!/usr/bin/env python3
"""sagebuild doctor on a matrix this machine can only partly build: a Python that is not here, a
CUDA toolkit that is not here, one whose nvcc refuses the host compiler (a fake that says what
nvcc 12.4 says of a too-new g++), and the real CUDA 13.0 toolkit, with which a kernel really
compiles. Each problem is reported with its fix, each entry as ready or not with why, the exit
code says whether everything can build, and --json says the same.

Usage: doctor_check.py SAGEBUILD
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklib import check, fake_toolkit, finish  # noqa: E402

MATRIX = """\
package:
  name: demo
  version: {{file: VERSION, regex: '^(.+)$'}}
  source_dir: src
  build_command: ["{{python}}", "-m", "pip", "wheel", "{{source_dir}}"]
architectures: {{"8.0": ">=12.0"}}
default_archs: ["8.0"]
cuda:
  "13.0": {{version: "13.0.1"}}
  "12.6": {{version: "12.6.3"}}
  "12.4": {{version: "12.4.1"}}
torch:
  "2.11.0": {{cuda: ["13.0", "12.6"], python: ["3.12", "3.5"]}}
  "2.5.0": {{cuda: ["12.4"], python: ["3.12"]}}
platforms: {{linux: {{tag: linux_x86_64, os: linux}}}}
profiles: {{all: {{}}}}
toolchains:
  cuda: {{"12.4": "{old}"}}
"""

REFUSES_GCC = ('echo "host_config.h:143:2: error: #error -- unsupported GNU version! gcc '
               'versions later than 13 are not supported!" >&2; exit 1')


def main():
    sagebuild = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="sagebuild-doctor-") as tmp:
        old = fake_toolkit(os.path.join(tmp, "cuda-12.4"), "12.4.131", REFUSES_GCC)
        with open(os.path.join(tmp, "VERSION"), "w") as f:
            f.write("1.0\n")
        matrix = os.path.join(tmp, "matrix.yaml")
        with open(matrix, "w") as f:
            f.write(MATRIX.format(old=old))
        env = dict(os.environ, SAGEBUILD_CACHE_DIR=os.path.join(tmp, "cache"))
        env.pop("CUDAHOSTCXX", None)

        def doctor(*args, extra=None):
            return subprocess.run([sagebuild, "--matrix", matrix, "doctor", *args],
                                  capture_output=True, text=True, env=dict(env, **(extra or {})),
                                  timeout=600)

        text = doctor()
        out = text.stdout
        check("exit 4: some entries cannot build here", text.returncode == 4,
              f"exit {text.returncode}\n{out}{text.stderr}")
        check("a missing Python is a problem with its fix",
              "PROBLEM  Python 3.5" in out and "fix: pyenv install 3.5" in out, out)
        check("a missing toolkit is a problem with its fix",
              "PROBLEM  CUDA 12.6" in out and "no CUDA 12.6 toolkit" in out
              and "fix: install it (/usr/local/cuda-12.6), pass --cuda-path 12.6=DIR" in out, out)
        check("nvcc refusing the host compiler is found by compiling, with its fix",
              "PROBLEM  g++ with CUDA 12.4" in out and "unsupported GNU version" in out
              and "fix: install a host compiler CUDA 12.4 supports and name it in CUDAHOSTCXX"
              in out, out)
        check("the real CUDA 13.0 toolkit compiles and links a kernel with the host compiler",
              "ok       CUDA 13.0" in out and "ok       g++ with CUDA 13.0" in out
              and "compiles and links a kernel with nvcc 13.0" in out, out)
        check("a torch not in the cache is a warning: the first build installs it",
              "warning  torch 2.11.0 for Python 3.12" in out and "not in the cache yet" in out, out)
        check("disk and memory are reported",
              "disk for the cache" in out and "cores and memory" in out, out)
        check("each entry that cannot build says why",
              "1 of 5 entries can build here" in out
              and "cannot   linux-pytorch25-cu124-python312: g++ cannot compile with CUDA 12.4"
              in out
              and "cannot   linux-pytorch211-cu126-python312: no CUDA 12.6 toolkit" in out
              and "cannot   linux-pytorch211-cu130-python35: no Python 3.5 here" in out, out)

        as_json = doctor("--json")
        report = json.loads(as_json.stdout)
        ready = [e["id"] for e in report["entries"] if e["ready"]]
        check("--json says the same",
              as_json.returncode == 4 and report["ready"] == 1 and report["total"] == 5
              and ready == ["linux-pytorch211-cu130-python312"]
              and any(c["area"] == "host-compiler" and c["health"] == "problem"
                      for c in report["checks"]), as_json.stdout[:2000])

        one = doctor("--entry", "linux-pytorch211-cu130-python312", "--json")
        check("an entry that can build: exit 0", one.returncode == 0
              and json.loads(one.stdout)["ready"] == 1, one.stdout[:1500] + one.stderr)
        broken = doctor("--entry", "linux-pytorch211-cu130-python312",
                        extra={"CUDAHOSTCXX": os.path.join(tmp, "no-such-g++")})
        check("CUDAHOSTCXX naming a compiler that is not there: a problem, exit 4",
              broken.returncode == 4 and "PROBLEM  " in broken.stdout
              and "no-such-g++ cannot compile with CUDA 13.0" in broken.stdout,
              broken.stdout + broken.stderr)
        typo = doctor("--entry", "linux-pytorch211-cu130-python3122")
        check("an unknown entry: exit 2 with a did-you-mean",
              typo.returncode == 2 and "did you mean 'linux-pytorch211-cu130-python312'"
              in typo.stderr, typo.stderr)
    return finish("doctor")


if __name__ == "__main__":
    sys.exit(main())
