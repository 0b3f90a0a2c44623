#!/usr/bin/env python3
"""Writes the verify-wheel test corpus: one good wheel and, for every check, bad wheels that must
fail it. Each wheel is built from real parts: an extension module compiled here with nvcc (SASS
for the listed architectures) and a C library, real WHEEL/METADATA/RECORD files, and then one
defect is introduced. `expected.json` maps each wheel to the exact set of check ids it fails.

Usage: make_corpus.py OUT_DIR [--nvcc PATH]
Needs nvcc and a C compiler; without nvcc it writes nothing and exits 77 (ctest: skipped).
"""
import argparse
import base64
import csv
import hashlib
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import warnings
import zipfile

import adversarial_cases

warnings.filterwarnings("ignore", "Duplicate name", UserWarning)  # a defect we write on purpose

NAME, VERSION, BUILD = "sageattention", "2.2.0", "280.129"
TORCH, CUDA, PYTHON = "2.8.0", "12.9.1", "3.12"
ARCHS = ["8.0", "9.0a"]
KERNEL = r"""
__global__ void scale(float* x, float s) { x[blockIdx.x * blockDim.x + threadIdx.x] *= s; }
extern "C" int sage_launch(float* x, float s, int n) { scale<<<n / 128, 128>>>(x, s); return 0; }
"""
PE_SOURCE = r"""
#include <windows.h>
int __stdcall DllMainCRTStartup(void* module, unsigned reason, void* reserved) { return 1; }
__declspec(dllexport) int sage_ticks(void) { return (int)GetTickCount(); }
#ifdef USE_WINSOCK
__declspec(dllexport) int sage_net(void) { return WSAGetLastError(); }
#endif
"""
C_SOURCE = r"""
#include <string.h>
#include <zlib.h>
int sage_copy(char* d, const char* s, unsigned long n) { memcpy(d, s, n); return zlibVersion()[0]; }
"""


def compile_binaries(work, nvcc):
    """Returns {label: bytes} of the shared objects the corpus uses."""
    cu = os.path.join(work, "k.cu")
    with open(cu, "w") as f:
        f.write(KERNEL)
    c = os.path.join(work, "c.c")
    with open(c, "w") as f:
        f.write(C_SOURCE)

    def nvcc_so(out, gencodes, link=()):
        args = [nvcc, "-shared", "-Xcompiler", "-fPIC", "-o", out, cu, *link]
        for g in gencodes:
            args += ["-gencode", g]
        subprocess.run(args, check=True)
        return open(out, "rb").read()

    binaries = {
        "full": nvcc_so(os.path.join(work, "full.so"),
                        ["arch=compute_80,code=sm_80", "arch=compute_90a,code=sm_90a"]),
        "sm80_only": nvcc_so(os.path.join(work, "sm80.so"), ["arch=compute_80,code=sm_80"]),
    }
    # Library search paths: an absolute one (loads whatever lies there on the user's machine)
    # and an $ORIGIN one that climbs out of site-packages.
    for label, rpath in (("rpath_absolute", "/tmp/evil"), ("rpath_climbs", "$ORIGIN/../../..")):
        binaries[label] = nvcc_so(os.path.join(work, label + ".so"), ["arch=compute_80,code=sm_80",
                                  "arch=compute_90a,code=sm_90a"], ["-Xlinker", f"-rpath={rpath}"])
    so = os.path.join(work, "libz_user.so")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", so, c, "-Wl,--no-as-needed", "-lz"],
                   check=True)
    binaries["needs_libz"] = open(so, "rb").read()
    # Windows modules: real PE DLLs from mingw-w64, carrying in .nv_fatb the fat binary that
    # nvcc made for the Linux module (MSVC is not available here; the PE layout is the same).
    mingw = shutil.which("x86_64-w64-mingw32-gcc")
    if mingw:
        pe_c = os.path.join(work, "pe.c")
        with open(pe_c, "w") as f:
            f.write(PE_SOURCE)
        for label, so_name, extra in (("pe_full", "full.so", []), ("pe_sm80_only", "sm80.so", []),
                                      ("pe_winsock", "full.so", ["-DUSE_WINSOCK", "-lws2_32"])):
            blob = os.path.join(work, label + ".fatbin")
            subprocess.run(["objcopy", "-O", "binary", "--only-section=.nv_fatbin",
                            os.path.join(work, so_name), blob], check=True)
            dll = os.path.join(work, label + ".dll")
            subprocess.run([mingw, "-shared", "-nostdlib", "-o", dll, pe_c, "-lkernel32"] + extra, check=True)
            # objcopy notes that the new section has no virtual address: verify-wheel reads
            # .nv_fatb by its file offset, as cuobjdump does.
            subprocess.run(["x86_64-w64-mingw32-objcopy", "--add-section", f".nv_fatb={blob}",
                            "--set-section-flags", ".nv_fatb=contents,readonly,data", dll],
                           check=True, stderr=subprocess.DEVNULL)
            binaries[label] = open(dll, "rb").read()
    return binaries


def digest(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


class Wheel:
    """A wheel under construction: files, metadata, and knobs for each defect."""

    def __init__(self, binary, platform="linux_x86_64", build=BUILD, python_tag="cp312"):
        self.platform, self.build, self.python_tag = platform, build, python_tag
        self.dist = f"{NAME}-{VERSION}.dist-info"
        self.files = {  # path -> bytes, in archive order
            f"{NAME}/__init__.py": b"from ._kernels import *\n",
            f"{NAME}/_kernels.cpython-312-x86_64-linux-gnu.so": binary,
        }
        self.metadata = {"Metadata-Version": "2.1", "Name": NAME, "Version": VERSION,
                         "Requires-Python": ">=3.9", "Requires-Dist": [f"torch==2.8.*", "numpy"]}
        self.wheel = {"Wheel-Version": "1.0", "Generator": "corpus", "Root-Is-Purelib": "false",
                      "Tag": [f"{python_tag}-{python_tag}-{platform}"], "Build": build}
        self.provenance = {"schema": 1, "sagebuild": "0.1.0", "commit": "0" * 40, "dirty": False,
                           "entry": "linux-pytorch28-cu129-python312", "package": NAME,
                           "version": VERSION, "torch": TORCH, "cuda": CUDA, "python": PYTHON,
                           "platform_tag": platform, "archs": ARCHS, "flags": []}
        self.record_edit = None   # function(rows) -> rows
        self.extra = []           # (ZipInfo or name, bytes) written after the regular files
        self.patch = None         # function(bytes of the finished archive) -> bytes
        self.drop_record = False  # leave RECORD out of the archive
        self.verify_args = []     # extra verify-wheel arguments for this wheel

    @staticmethod
    def headers(fields):
        lines = []
        for key, value in fields.items():
            for v in value if isinstance(value, list) else [value]:
                lines.append(f"{key}: {v}")
        return ("\n".join(lines) + "\n").encode()

    def filename(self):
        build = f"-{self.build}" if self.build else ""
        return f"{NAME}-{VERSION}{build}-{self.python_tag}-{self.python_tag}-{self.platform}.whl"

    def write(self, path):
        files = dict(self.files)
        files[f"{self.dist}/METADATA"] = self.headers(self.metadata)
        files[f"{self.dist}/WHEEL"] = self.headers(self.wheel)
        if self.provenance is not None:
            files[f"{self.dist}/sagebuild.json"] = json.dumps(self.provenance).encode()
        rows = [[p, digest(d), str(len(d))] for p, d in files.items()]
        for info, data in self.extra:
            name = info.filename if isinstance(info, zipfile.ZipInfo) else info
            rows.append([name, digest(data), str(len(data))])
        rows.append([f"{self.dist}/RECORD", "", ""])
        if self.record_edit:
            rows = self.record_edit(rows)
        record = io.StringIO()
        csv.writer(record, lineterminator="\n").writerows(rows)
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
            for p, d in files.items():
                z.writestr(p, d)
            for info, data in self.extra:
                z.writestr(info, data)
            if not self.drop_record:
                z.writestr(f"{self.dist}/RECORD", record.getvalue())
        data = buffer.getvalue()
        if self.patch:
            data = self.patch(data)
        with open(path, "wb") as f:
            f.write(data)


def set_declared_size(archive, name, size):
    """Rewrites an entry's uncompressed size in the central directory and its local header."""
    data = bytearray(archive)
    with zipfile.ZipFile(io.BytesIO(archive)) as z:
        info = z.getinfo(name)
    struct.pack_into("<I", data, info.header_offset + 22, size)
    at = data.find(b"PK\x01\x02")
    while at != -1:
        name_len = struct.unpack_from("<H", data, at + 28)[0]
        if data[at + 46:at + 46 + name_len] == name.encode():
            struct.pack_into("<I", data, at + 24, size)
        at = data.find(b"PK\x01\x02", at + 4)
    return bytes(data)


def corrupt_stored(archive, marker):
    """Flips one byte inside stored (uncompressed) data that contains `marker`."""
    data = bytearray(archive)
    at = data.find(marker)
    data[at] ^= 0xFF
    return bytes(data)


def cases(binaries):
    full = binaries["full"]
    c = {}

    def case(name, expected, **kwargs):
        w = Wheel(kwargs.pop("binary", full), **kwargs)
        c[name] = (w, set(expected))
        return w

    case("good", [])
    # ---- names ----
    w = case("n001_bad_name", ["N001"])
    w.filename = lambda: f"{NAME}-{VERSION}-{BUILD}-cp312-cp312.whl"
    w = case("n002_unknown_build_tag", ["N002", "P002"], build="281.129")
    w = case("n002_no_build_tag", ["N002"], build="")
    # ---- archive ----
    w = case("a002_path_traversal", ["A002", "A005"])
    w.extra.append(("../../etc/evil.txt", b"x"))
    w = case("a003_symlink", ["A003"])
    link = zipfile.ZipInfo(f"{NAME}/link.py")
    link.create_system = 3
    link.external_attr = (0o120777 << 16)
    w.extra.append((link, b"__init__.py"))
    w = case("a004_duplicate_entry", ["A004", "R006"])
    w.extra.append((f"{NAME}/__init__.py", b"# again\n"))
    w = case("a004_case_clash", ["A004"])
    w.extra.append((f"{NAME}/__INIT__.py", b"# case\n"))
    w = case("a005_outside_package", ["A005"])
    w.extra.append(("stray.txt", b"stray\n"))
    w = case("a006_crc", ["A006"])
    stored = zipfile.ZipInfo(f"{NAME}/data.bin")
    stored.compress_type = zipfile.ZIP_STORED
    w.extra.append((stored, b"MARKER-0123456789" * 4))
    w.patch = lambda data: corrupt_stored(data, b"MARKER-0123456789")
    w = case("a007_zip_bomb_ratio", ["A007"])
    w.extra.append((f"{NAME}/zeros.bin", bytes(64 << 20)))
    w = case("a007_declared_size_lies", ["A007"])
    w.extra.append((f"{NAME}/big.txt", b"0123456789" * 1000))
    w.patch = lambda data: set_declared_size(data, f"{NAME}/big.txt", 100)
    # ---- RECORD ----
    w = case("r001_no_record", ["R001"])
    w.drop_record = True
    w = case("r002_wrong_hash", ["R002"])
    w.record_edit = lambda rows: [[p, digest(b"other") if p.endswith("__init__.py") else h, s]
                                  for p, h, s in rows]
    w = case("r003_wrong_size", ["R003"])
    w.record_edit = lambda rows: [[p, h, "1" if p.endswith("__init__.py") else s] for p, h, s in rows]
    w = case("r004_unlisted_file", ["R004"])
    w.record_edit = lambda rows: [r for r in rows if not r[0].endswith("__init__.py")]
    w = case("r005_listed_missing", ["R005"])
    w.record_edit = lambda rows: rows[:-1] + [[f"{NAME}/gone.py", digest(b""), "0"]] + rows[-1:]
    w = case("r006_duplicate_row", ["R006"])
    w.record_edit = lambda rows: rows[:1] + rows
    w = case("r007_md5_hash", ["R007"])
    w.record_edit = lambda rows: [[p, "md5=xyz" if p.endswith("__init__.py") else h, s]
                                  for p, h, s in rows]
    w = case("r007_padded_digest", ["R007"])
    w.record_edit = lambda rows: [[p, h + "=" if p.endswith("__init__.py") else h, s]
                                  for p, h, s in rows]
    w = case("r008_record_hashed", ["R008"])
    w.record_edit = lambda rows: rows[:-1] + [[rows[-1][0], digest(b"x"), "1"]]
    # ---- WHEEL ----
    w = case("h001_wheel_version_2", ["H001"])
    w.wheel["Wheel-Version"] = "2.0"
    w = case("h002_purelib", ["H002"])
    w.wheel["Root-Is-Purelib"] = "true"
    w = case("h003_tag_mismatch", ["H003"])
    w.wheel["Tag"] = ["cp311-cp311-linux_x86_64"]
    w = case("h004_build_mismatch", ["H004"])
    w.wheel["Build"] = "270.128"
    # ---- METADATA ----
    w = case("m002_version_mismatch", ["M002"])
    w.metadata["Version"] = "2.2.1"
    w = case("m003_wrong_torch_pin", ["M003"])
    w.metadata["Requires-Dist"] = ["torch==2.7.*"]
    w = case("m003_no_torch_pin", ["M003"])
    w.metadata["Requires-Dist"] = ["torch"]
    w = case("m004_requires_python", ["M004"])
    w.metadata["Requires-Python"] = ">=3.13"
    # ---- binaries ----
    w = case("b001_wrong_machine", ["B001"],
             binary=full[:18] + struct.pack("<H", 183) + full[20:])
    w = case("b001_wrong_python_suffix", ["B001"])
    so = w.files.pop(f"{NAME}/_kernels.cpython-312-x86_64-linux-gnu.so")
    w.files[f"{NAME}/_kernels.cpython-311-x86_64-linux-gnu.so"] = so
    w = case("b002_needs_unlisted_library", ["B002"])
    w.files[f"{NAME}/libsage_copy.so"] = binaries["needs_libz"]
    w = case("b003_glibc_too_new", ["B003"], platform="manylinux_2_12_x86_64")
    w.files[f"{NAME}/libsage_copy.so"] = binaries["needs_libz"].replace(b"libz.so.1", b"libm.so.6")
    w = case("b004_missing_arch", ["B004"], binary=binaries["sm80_only"])
    # ---- Windows (PE) modules ----
    if "pe_full" in binaries:
        def windows(name, expected, binary, platform="win_amd64"):
            w = case(name, expected, platform=platform)
            w.files.pop(f"{NAME}/_kernels.cpython-312-x86_64-linux-gnu.so")
            w.files[f"{NAME}/_kernels.cp312-win_amd64.pyd"] = binary
            return w
        windows("pe_good", [], binaries["pe_full"])
        windows("b002_pe_unlisted_import", ["B002"], binaries["pe_winsock"])
        windows("b004_pe_missing_arch", ["B004"], binaries["pe_sm80_only"])
        windows("b001_pe_in_linux_wheel", ["B001"], binaries["pe_full"], platform="linux_x86_64")
    # ---- provenance ----
    w = case("p001_no_provenance", ["P001"])
    w.provenance = None
    w = case("p002_provenance_disagrees", ["P002", "N002"])
    w.provenance["torch"] = "2.7.0"
    w = case("n003_not_the_expected_entry", ["N003"])
    w.verify_args = ["--expect-entry", "manylinux-pytorch28-cu129-python312"]
    adversarial_cases.add_cases(case, binaries)
    return c


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    args = parser.parse_args()
    if not os.path.exists(args.nvcc) or not shutil.which("cc"):
        print("make_corpus: no nvcc or cc; the corpus needs both", file=sys.stderr)
        return 77
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        binaries = compile_binaries(work, args.nvcc)
    expected, options = {}, {}
    for label, (wheel, fails) in cases(binaries).items():
        directory = os.path.join(args.out, label)
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, wheel.filename())
        wheel.write(path)
        expected[os.path.relpath(path, args.out)] = sorted(fails)
        if wheel.verify_args:
            options[os.path.relpath(path, args.out)] = wheel.verify_args
    with open(os.path.join(args.out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=2, sort_keys=True)
    with open(os.path.join(args.out, "options.json"), "w") as f:
        json.dump(options, f, indent=2, sort_keys=True)
    print(f"make_corpus: {len(expected)} wheels in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
