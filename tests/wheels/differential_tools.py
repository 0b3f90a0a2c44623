#!/usr/bin/env python3
"""Differential tests of verify-wheel against the Python ecosystem's own tools, on the corpus:

- the `wheel` package's RECORD verification (WheelFile checks each member's hash and size as it
  is read): its verdict must equal ours on the RECORD/archive checks, except the documented,
  deliberate differences listed in DELIBERATE below (cases where we are stricter);
- `cuobjdump --list-elf/--list-ptx` (NVIDIA's, from PyPI) on every ELF binary: the SASS and PTX
  architectures we read from the fat binaries must be exactly its list (the Linux cuobjdump does
  not read PE images);
- `auditwheel show` on the good wheel: the glibc it derives must equal our min_glibc;
- `check-wheel-contents` on the good wheel: it must pass (its checks are about content layout).

Usage: differential_tools.py SAGEBUILD CORPUS_DIR MATRIX
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

from wheel.wheelfile import WheelError, WheelFile

# Wheels where we fail a RECORD/archive check and the wheel package does not, and why.
DELIBERATE = {
    "a002_path_traversal": "WheelFile reads members by name and never writes them",
    "a003_symlink": "a symlink entry is just bytes to zipfile; installers may materialize it",
    "a004_case_clash": "names differing only in case clash on Windows/macOS file systems",
    "a004_duplicate_entry": "zipfile serves the last duplicate; RECORD lists the path twice",
    "a007_zip_bomb_ratio": "zipfile inflates without limits; we refuse ratios over 1000:1",
    "r006_duplicate_row": "the wheel package keeps the last row for a path",
    "r003_wrong_size": "the wheel package checks RECORD hashes but never sizes",
    "r008_record_hashed": "the wheel package ignores RECORD's own row",
    "r005_listed_missing": "the wheel package only checks members that exist",
}
OURS = {"A001", "A002", "A003", "A004", "A006", "A007",
        "R001", "R002", "R003", "R004", "R005", "R006", "R007", "R008"}


def wheel_package_ok(path):
    try:
        with WheelFile(path) as wf:
            for info in wf.infolist():
                if not info.filename.endswith("/") and not info.filename.endswith("RECORD"):
                    wf.read(info)
        return True, ""
    except (WheelError, zipfile.BadZipFile, ValueError, OSError, NotImplementedError, RuntimeError) as e:
        return False, str(e).splitlines()[0][:80]


def cuobjdump_archs(cuobjdump, so_bytes):
    with tempfile.NamedTemporaryFile(suffix=".so") as f:
        f.write(so_bytes)
        f.flush()
        out = ""
        for flag in ("--list-elf", "--list-ptx"):
            out += subprocess.run([cuobjdump, flag, f.name], capture_output=True, text=True).stdout
    sass = sorted(set(re.findall(r"\.(sm_\d+[af]?)\.cubin", out)))
    ptx = sorted(set("compute_" + a for a in re.findall(r"\.sm_(\d+[af]?)\.ptx", out)))
    return sass, ptx


def main():
    sagebuild, corpus, matrix = sys.argv[1:4]
    failures = 0
    rows = []
    for path in sorted(glob.glob(os.path.join(corpus, "*", "*.whl"))):
        label = os.path.basename(os.path.dirname(path))
        done = subprocess.run([sagebuild, "--matrix", matrix, "verify-wheel", "--json", path],
                              capture_output=True, text=True)
        report = json.loads(done.stdout)[0]
        ours_ok = not ({f["check"] for f in report["findings"]} & OURS)
        theirs_ok, why = wheel_package_ok(path)
        if ours_ok == theirs_ok:
            verdict = "agree"
        elif not ours_ok and theirs_ok and label in DELIBERATE:
            verdict = "deliberate: " + DELIBERATE[label]
        elif not ours_ok and theirs_ok and label.startswith("x_"):
            # The adversarial family (adversarial_cases.py): what a strict publisher refuses and
            # an unpacker lets through.
            verdict = "deliberate: a publisher's gate refuses what an unpacker tolerates"
        else:
            verdict = "DISAGREE"
            failures += 1
        rows.append((label, "ok" if ours_ok else "fail", "ok" if theirs_ok else "fail", verdict, why))
    print(f"{'wheel':<30} {'sagebuild':<9} {'wheel pkg':<9} verdict")
    for label, a, b, verdict, why in rows:
        print(f"{label:<30} {a:<9} {b:<9} {verdict}{' (' + why + ')' if why and b == 'fail' else ''}")

    cuobjdump = shutil.which("cuobjdump") or next(iter(glob.glob(os.path.join(
        sys.prefix, "lib", "python3*", "site-packages", "nvidia", "*", "bin", "cuobjdump"))), None)
    if cuobjdump:
        compared = 0
        for path in sorted(glob.glob(os.path.join(corpus, "*", "*.whl"))):
            if os.path.basename(os.path.dirname(path)).startswith("x_"):
                continue  # the adversarial family's binaries are the good wheel's (or broken ELF)
            report = json.loads(subprocess.run(
                [sagebuild, "--matrix", matrix, "verify-wheel", "--json", path],
                capture_output=True, text=True).stdout)[0]
            with zipfile.ZipFile(path) as z:
                if any(n.endswith((".pyd", ".dll")) for n in z.namelist()):
                    # NVIDIA's Linux cuobjdump reads ELF only ("does not contain device code" for
                    # a PE image); PE fat binaries are covered by the corpus expectations.
                    continue
                sass, ptx = set(), set()
                for name in z.namelist():
                    if name.endswith(".so"):
                        s, p = cuobjdump_archs(cuobjdump, z.read(name))
                        sass |= set(s)
                        ptx |= set(p)
            if sorted(sass) != report["sass"] or sorted(ptx) != report["ptx"]:
                if "b001_wrong_machine" in path:
                    continue  # cuobjdump also reads the patched machine field's ELF
                print(f"DISAGREE cuobjdump {os.path.basename(path)}: {sorted(sass)} {sorted(ptx)} "
                      f"vs {report['sass']} {report['ptx']}")
                failures += 1
            compared += 1
        print(f"cuobjdump: {compared} wheels' architecture lists compared")
    else:
        print("cuobjdump: not installed, skipped")

    good = glob.glob(os.path.join(corpus, "good", "*.whl"))[0]
    report = json.loads(subprocess.run([sagebuild, "--matrix", matrix, "verify-wheel", "--json",
                                        good], capture_output=True, text=True).stdout)[0]
    show = subprocess.run([sys.executable, "-m", "auditwheel", "show", good],
                          capture_output=True, text=True)
    match = re.search(r'"manylinux_(\d+)_(\d+)_x86_64"', show.stdout)
    if match:
        theirs = f"{match.group(1)}.{match.group(2)}"
        same = theirs == report["min_glibc"]
        failures += not same
        print(f"auditwheel show: needs glibc {theirs}; sagebuild: {report['min_glibc']} "
              f"({'agree' if same else 'DISAGREE'})")
    else:
        print(f"auditwheel show gave no manylinux tag: {show.stdout.strip()[:200]} "
              f"{show.stderr.strip()[:200]}")
        failures += 1
    cwc = subprocess.run([sys.executable, "-m", "check_wheel_contents", good],
                         capture_output=True, text=True)
    print(f"check-wheel-contents on the good wheel: {cwc.stdout.strip() or cwc.stderr.strip()}")
    failures += cwc.returncode != 0
    print(f"{len(rows) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
