#!/usr/bin/env python3
"""sagebuild's manylinux verdict against auditwheel's, on the same wheels (run with the tools
venv's Python, which has auditwheel):

- the oldest policy the binaries' symbol versions meet (verify-wheel --json "manylinux";
  auditwheel's sym_policy, what `auditwheel show` prints as "constrains the platform tag to");
- the libraries on no policy's list (verify-wheel "external_libraries"; auditwheel's external
  references for manylinux_2_28, which it would have to graft).

The wheels: shared libraries compiled here with the system's gcc to need known things (a plain C
function, pthread_create on a new glibc, C++ streams, a library no system has), and the real
wheels given on the command line (the per-torch and universal wheels the test command builds).

Usage: manylinux_verdict_check.py SAGEBUILD [WHEEL...]
"""
import base64
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from checklib import check, finish  # noqa: E402

SOURCES = {
    "plain": ("c", "#include <string.h>\nvoid copy(char* a, const char* b, unsigned long n) { memcpy(a, b, n); }\n", []),
    "threads": ("c", "#include <pthread.h>\nstatic void* run(void* p) { return p; }\n"
                     "int go(void) { pthread_t t; return pthread_create(&t, 0, run, 0); }\n", ["-lpthread"]),
    "streams": ("cpp", "#include <sstream>\n#include <string>\n"
                       "std::string show(int x) { std::ostringstream s; s << x; return s.str(); }\n", []),
    "external": ("c", "int torch_thing(void);\nint go(void) { return torch_thing(); }\n", ["-L{tmp}", "-lsagetest_external"]),
}


def make_wheel(directory, name, library):
    tag = "cp312-cp312-linux_x86_64"
    wheel = f"demo_{name}-1.0-{tag}.whl"
    dist = f"demo_{name}-1.0.dist-info"
    files = {f"demo_{name}/_lib.so": open(library, "rb").read(), f"demo_{name}/__init__.py": b"",
             f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: demo_{name}\nVersion: 1.0\n".encode(),
             f"{dist}/WHEEL": f"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: {tag}\n".encode()}
    record = "".join(f"{p},sha256={base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b'=').decode()},{len(d)}\n"
                     for p, d in files.items()) + f"{dist}/RECORD,,\n"
    path = os.path.join(directory, wheel)
    with zipfile.ZipFile(path, "w") as z:
        for p, d in files.items():
            z.writestr(p, d)
        z.writestr(f"{dist}/RECORD", record)
    return path


def auditwheel_verdict(wheel):
    from auditwheel.wheel_abi import analyze_wheel_abi
    info = analyze_wheel_abi(None, None, Path(wheel), frozenset(), disable_isa_ext_check=True,
                             allow_graft=False)
    sym = info.sym_policy.name.rsplit("_", 2)[0] if info.sym_policy.name.startswith("manylinux") else ""
    refs = info.external_refs.get("manylinux_2_28_x86_64")
    return sym, sorted(refs.libs) if refs else []


def main():
    sagebuild, *given = sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        # A library no system has: linked against, then removed, as torch's are for auditwheel.
        stub = os.path.join(tmp, "libsagetest_external.so")
        subprocess.run(["gcc", "-shared", "-fPIC", "-o", stub, "-x", "c", "-"], input="int torch_thing(void) { return 1; }\n",
                       text=True, check=True)
        wheels = []
        for name, (language, source, flags) in SOURCES.items():
            library = os.path.join(tmp, f"{name}.so")
            compiler = "g++" if language == "cpp" else "gcc"
            subprocess.run([compiler, "-shared", "-fPIC", "-O1", "-o", library, "-x", "c++" if language == "cpp" else "c",
                            "-"] + [f.format(tmp=tmp) for f in flags], input=source, text=True, check=True)
            wheels.append(make_wheel(tmp, name, library))
        os.remove(stub)
        for wheel in wheels + given:
            report = json.loads(subprocess.run([sagebuild, "verify-wheel", "--json", "--select", "B", wheel],
                                               capture_output=True, text=True).stdout)[0]
            ours = (report["manylinux"], sorted(report["external_libraries"]))
            theirs = auditwheel_verdict(wheel)
            check(f"{os.path.basename(wheel)}: sagebuild {ours[0] or 'none'} {ours[1]}, auditwheel "
                  f"{theirs[0] or 'none'} {theirs[1]}", ours == theirs)
    return finish("manylinux verdicts")


if __name__ == "__main__":
    sys.exit(main())
