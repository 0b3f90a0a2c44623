"""What the end-to-end check scripts share: named checks that print ok/FAIL with detail and are
counted for the exit status, a free loopback port for the servers they start, a minimal
matrix.yaml for a demo package, and fake tools (scripts, a CUDA toolkit whose nvcc says what it
is told)."""
import os
import socket
import stat

failures = []

# The CI preset's sagebuild runs under ASan and UBSan (tests/CMakeLists.txt sets this for its
# tests): on the bounds' inputs its CPU time is 5-9 times the optimized build's (measured:
# docs/reliability.md), so CPU bounds, written for the optimized build, stretch by CPU_FACTOR; and
# ASan reserves terabytes of address space for its shadow, so an address-space limit cannot apply.
SANITIZED = os.environ.get("SAGEBUILD_SANITIZED") == "1"
CPU_FACTOR = 10 if SANITIZED else 1


def check(name, condition, detail=""):
    print(("ok   " if condition else "FAIL ") + name)
    if not condition:
        failures.append(name)
        if detail:
            print("     " + detail.replace("\n", "\n     "))


def finish(what):
    """Prints the tally; returns the exit status."""
    print(f"{what}: {len(failures)} failed")
    return 1 if failures else 0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


DEMO_MATRIX = """\
package:
  name: demo
  version: {{file: VERSION, regex: '^(.+)$'{version_extra}}}
  source_dir: src
  build_command: {build_command}
architectures: {{"9.0a": ">=12.0"}}
default_archs: ["9.0a"]
cuda: {{"13.0": {{version: "13.0.1"}}}}
torch:
  "2.11.0": {{cuda: ["13.0"], python: ["3.12"]}}
platforms: {{linux: {{tag: linux_x86_64, os: linux}}}}
profiles: {{all: {{}}}}
"""


def demo_matrix(build_command, version_extra=""):
    """matrix.yaml of a package "demo" whose version is in VERSION, built from src/ by
    `build_command` (a YAML list), for torch 2.11 / CUDA 13.0 / Python 3.12 on Linux."""
    return DEMO_MATRIX.format(build_command=build_command, version_extra=version_extra)


def write_script(path, body):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, stat.S_IRWXU)
    return path


def fake_toolkit(root, version, otherwise):
    """A CUDA toolkit whose nvcc reports `version` and does `otherwise` for anything else."""
    release = version.rsplit(".", 1)[0]
    write_script(os.path.join(root, "bin", "nvcc"),
                 f'if [ "$1" = "--version" ]; then\n'
                 f"  echo 'Cuda compilation tools, release {release}, V{version}'; exit 0\nfi\n"
                 + otherwise)
    return root


def fake_wheel(directory, torch, cuda, tag, project="sageattention", version="2.2.0", stable=False,
               requires=None, padding=0):
    """A small consistent wheel with the name, METADATA, WHEEL and provenance (sagebuild.json) a
    sagebuild build gives the variant, and no binary: for tests of what installers and indexes do
    with names and metadata. `tag`: "cp312-cp312-manylinux_2_28_x86_64"; torch and cuda: "2.9.0",
    "12.8.1"; `stable`: a universal (stable-ABI) wheel, torch its target (a py3-none tag without
    it: a per-torch-py3 wheel, pinned like a per-torch one); `padding`: bytes of
    random data in one more file (a wheel that takes a while to upload). Returns the path."""
    import json
    t = torch.split(".")
    c = cuda.split(".")
    build = f"{t[0]}{t[1]}{t[2]}.{c[0]}{c[1]}"
    requires = requires if requires is not None else (
        f"torch>={t[0]}.{t[1]}" if stable else f"torch=={t[0]}.{t[1]}.*")
    dist = f"{project}-{version}.dist-info"
    python = tag.split("-")[0]
    files = {
        f"{project}/__init__.py": f"BUILT_FOR = '{torch}+cu{cuda} {tag}'\n".encode(),
        f"{dist}/METADATA": (f"Metadata-Version: 2.1\nName: {project}\nVersion: {version}\n"
                             f"Requires-Python: >=3.9\n" + (f"Requires-Dist: {requires}\n" if requires else "")).encode(),
        f"{dist}/WHEEL": f"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: {tag}\nBuild: {build}\n".encode(),
        f"{dist}/sagebuild.json": json.dumps({
            "schema": 1, "sagebuild": "0.1.0", "package": project, "version": version, "torch": torch,
            "abi": "stable" if stable else "per-torch-py3" if python == "py3" else "per-torch", "cuda": cuda,
            "python": "3.13" if python == "py3" else f"3.{python[3:]}", "platform_tag": tag.split("-", 2)[2],
            "archs": ["9.0a"]}).encode(),
    }
    if padding:
        files[f"{project}/_padding.bin"] = os.urandom(padding)
    return write_wheel(os.path.join(directory, f"{project}-{version}-{build}-{tag}.whl"), dist, files)


def write_wheel(path, dist_info, files):
    """A wheel at `path` holding `files` ({name: bytes}) and a RECORD in `dist_info` that lists
    them with their hashes. Returns the path."""
    import base64
    import hashlib
    import zipfile
    record = "".join(f"{p},sha256={base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b'=').decode()},{len(d)}\n"
                     for p, d in files.items()) + f"{dist_info}/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as z:
        for p, d in files.items():
            z.writestr(p, d)
        z.writestr(f"{dist_info}/RECORD", record)
    return path
