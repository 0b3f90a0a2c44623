#!/usr/bin/env python3
"""Differential test: what verify-wheel verified is what gets installed.

Generates wheels and mutates them at every layer an installer reads (the ZIP's end records and
central directory, entry flags and modes, METADATA's header lines, .data schemes, entry points),
runs `sagebuild verify-wheel --json` on all of them (archive, RECORD, WHEEL and METADATA checks),
and for every wheel it accepts requires the real readers to agree with its report:
  - CPython's zipfile, on every CPython installed here (--every-python: they read ZIP files
    differently, e.g. 3.12+ honours the Unicode Path extra field), lists exactly the files
    verify-wheel verified, with the same bytes;
  - Python's email parser (as importlib.metadata and pip read METADATA) gives the same
    Requires-Dist values;
  - `pip install --no-deps --target` writes exactly those files into site-packages (and no
    command but the project's own, whatever entry_points.txt's line ends say), and the installed distribution's requirements
    (importlib.metadata, what a later resolve reads) are the verified ones.
A wheel verify-wheel refuses needs no agreement: refusing an ambiguity is the point.

Usage: differential_install.py SAGEBUILD [--count N] [--pip-installs N] [--seed S] [--every-python]
The test command runs a short version; docs/reliability.md gives the long one.
"""
import argparse
import base64
import glob
import email
import hashlib
import io
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile
import zlib

NAME, VERSION = "sageattention", "2.2.0"
WHEEL_NAME = f"{NAME}-{VERSION}-py3-none-any.whl"
DIST = f"{NAME}-{VERSION}.dist-info"
DATA = f"{NAME}-{VERSION}.data"
CHECKS = "A,R,H,M001,M002,M004"
PIN = "torch==2.11.*"

BASE_METADATA = (f"Metadata-Version: 2.4\nName: {NAME}\nVersion: {VERSION}\n"
                 f"Summary: quantized attention\nRequires-Dist: {PIN}\nRequires-Dist: numpy\n"
                 "\nThe long description.\n")
BASE_WHEEL = "Wheel-Version: 1.0\nGenerator: differential\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


def digest(data):
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def unicode_path_field(unicode_name, header_name):
    """An Info-ZIP Unicode Path extra field (0x7075) that CPython 3.12+ honours for header_name."""
    data = b"\x01" + struct.pack("<I", zlib.crc32(header_name.encode())) + unicode_name.encode()
    return struct.pack("<HH", 0x7075, len(data)) + data


def build_wheel(files, metadata=BASE_METADATA, wheel=BASE_WHEEL, modes=None, extras=None,
                record_edit=None, comment=b""):
    """A wheel zipfile writes, RECORD true to its files. files: {name: bytes}; extras: {name:
    extra field bytes}; record_edit: a function of RECORD's text."""
    members = dict(files)
    members[f"{DIST}/METADATA"] = metadata.encode("utf-8", "surrogateescape")
    members[f"{DIST}/WHEEL"] = wheel.encode()
    record = "".join(f"{n},sha256={digest(d)},{len(d)}\n" for n, d in members.items())
    record += f"{DIST}/RECORD,,\n"
    members[f"{DIST}/RECORD"] = (record_edit(record) if record_edit else record).encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in members.items():
            info = zipfile.ZipInfo(n, (2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = ((modes or {}).get(n, 0o100644)) << 16
            info.extra = (extras or {}).get(n, b"")
            z.writestr(info, d)
        z.comment = comment
    return out.getvalue()


BASE_FILES = {f"{NAME}/__init__.py": b"from .core import sageattn\n",
              f"{NAME}/core.py": b"def sageattn(q, k, v):\n    return q\n"}


# ---- ZIP structure: the tricks of docs/reliability.md, each on its own ----

def end_record(data):
    at = data.rfind(b"PK\x05\x06")
    return at, list(struct.unpack_from("<IHHHHIIH", data, at))


def second_central_directory(data):
    """A ZIP64 locator names a second central directory (one more hidden member) while the
    classic end record keeps naming the first: CPython reads the second."""
    at, rec = end_record(data)
    cd_offset, cd_size = rec[6], rec[5]
    hidden = f"{NAME}/hidden.py".encode()
    payload = b"print('hidden')\n"
    crc = zlib.crc32(payload)
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 0x21, crc, len(payload),
                        len(payload), len(hidden), 0) + hidden + payload
    body = data[:cd_offset]
    new_local_at = len(body)
    body += local
    central_old = data[cd_offset:cd_offset + cd_size]
    central_new = central_old + struct.pack(
        "<IHHHHHHIIIHHHHHII", 0x02014B50, 0x031E, 20, 0, 0, 0, 0x21, crc, len(payload),
        len(payload), len(hidden), 0, 0, 0, 0, 0o100644 << 16, new_local_at) + hidden
    old_at = len(body)
    body += central_old
    new_at = len(body)
    body += central_new
    z64_at = len(body)
    count = rec[4] + 1
    body += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, count, count,
                        len(central_new), new_at)
    body += struct.pack("<IIQI", 0x07064B50, 0, z64_at, 1)
    body += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, rec[3], rec[4], cd_size, old_at, 0)
    return body


def junk_in_central_directory(data):
    at, rec = end_record(data)
    cd_offset, cd_size = rec[6], rec[5]
    junk = b"\0" * 16
    central = data[cd_offset:cd_offset + cd_size] + junk
    return data[:cd_offset] + central + struct.pack(
        "<IHHHHIIH", 0x06054B50, 0, 0, rec[3], rec[4], len(central), cd_offset, 0)


def junk_before_end(data):
    at, _ = end_record(data)
    return data[:at] + b"JUNKJUNK" + data[at:]


def record_left_out_of_count(data):
    at, rec = end_record(data)
    return data[:at] + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, rec[3] - 1, rec[4] - 1, rec[5],
                                   rec[6], 0)


def comment_hides_end_record(data):
    at, rec = end_record(data)
    fake = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0, 0, 0, 0, 0)
    return data[:at] + struct.pack("<IHHHHIIH", *rec[:-1], len(fake)) + fake


def central_records(data):
    """(offset, fields) of each central directory record."""
    at, rec = end_record(data)
    pos, end, out = rec[6], rec[6] + rec[5], []
    while pos < end:
        fields = list(struct.unpack_from("<IHHHHHHIIIHHHHHII", data, pos))
        out.append((pos, fields))
        pos += 46 + fields[10] + fields[11] + fields[12]
    return out


def set_central(data, index, field, value):
    pos, fields = central_records(data)[index]
    fields[field] = value
    return data[:pos] + struct.pack("<IHHHHHHIIIHHHHHII", *fields) + data[pos + 46:]


def set_flag_everywhere(data, index, bit):
    pos, fields = central_records(data)[index]
    local = fields[16]
    flags = fields[3] | bit
    data = set_central(data, index, 3, flags)
    return data[:local + 6] + struct.pack("<H", flags) + data[local + 8:]


def symlink_under_fat(data):
    data = set_central(data, 0, 1, 0x0014)  # made_by: MS-DOS
    return set_central(data, 0, 15, 0o120777 << 16)


def flip_bytes(rng, data):
    """A few random bytes of the end records or central directory changed."""
    at, rec = end_record(data)
    lo = max(0, rec[6] - 64)
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(lo, len(out))
        out[i] = rng.randrange(256)
    return bytes(out)


# ---- METADATA: header lines as Python's email parser reads them ----

HEADER_TRICKS = ["X-Note : hi\n", "Caf\u00e9: x\n", "Summary: a\rRequires-Dist: torch<2\n",
                 "Requires-Dist: numpy\n torch==2.8.*\n", "From somebody\n", ": empty\n",
                 "Name: other\n", "Version: 9.9\n", "Metadata-Version: 99.0\n", "\tcontinued\n",
                 "Requires-Dist: torch<2\n", "Summary: x\x0bRequires-Dist: torch<2\n",
                 "Summary: x\x1cRequires-Dist: torch<2\n", "Summary: x\u2028Requires-Dist: y\n"]
ALPHABET = [" ", "\t", "\r", "\n", ":", "\u00e9", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\r\n",
            "\n\n", "Requires-Dist: torch<2", "-", "\\"]


def metadata_mutants(rng, count):
    lines = BASE_METADATA.splitlines(keepends=True)
    for trick in HEADER_TRICKS:
        for where in (0, 2, 4, len(lines) - 2):
            yield "".join(lines[:where] + [trick] + lines[where:])
    for _ in range(count):
        text = list(BASE_METADATA)
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(text) // 2 + 20)  # mostly inside the headers
            text.insert(min(i, len(text)), rng.choice(ALPHABET))
        yield "".join(text)


def cases(rng, count):
    """(label, wheel bytes)"""
    base = build_wheel(BASE_FILES)
    yield "base", base
    for label, edit in [("second_central_directory", second_central_directory),
                        ("junk_in_central_directory", junk_in_central_directory),
                        ("junk_before_end", junk_before_end),
                        ("record_left_out_of_count", record_left_out_of_count),
                        ("comment_hides_end_record", comment_hides_end_record),
                        ("flag_bit_5", lambda d: set_flag_everywhere(d, 0, 0x20)),
                        ("flag_bit_6", lambda d: set_flag_everywhere(d, 0, 0x40)),
                        ("symlink_under_fat", symlink_under_fat)]:
        yield label, edit(base)
    scoped = {
        "data_scripts_pip": {f"{DATA}/scripts/pip": b"#!python\n"},
        "data_data_python": {f"{DATA}/data/bin/python3": b"#!/bin/sh\n"},
        "data_data_torch": {f"{DATA}/data/lib/python3.12/site-packages/torch/__init__.py": b"x=1\n"},
        "data_unknown_scheme": {f"{DATA}/elsewhere/x.py": b"x=1\n"},
        "data_purelib_torch": {f"{DATA}/purelib/torch/__init__.py": b"x=1\n"},
        "data_scripts_own": {f"{DATA}/scripts/sageattention-bench": b"#!python\nprint(1)\n"},
        "data_share_own": {f"{DATA}/data/share/{NAME}/notes.txt": b"notes\n"},
        "data_purelib_own": {f"{DATA}/purelib/{NAME}/extra.py": b"x=1\n"},
    }
    for label, extra in scoped.items():
        yield label, build_wheel({**BASE_FILES, **extra})
    # One member, two names: CPython 3.12+ installs it under the Unicode Path field's name.
    decoy = f"{NAME}/t4_decoy.py"
    for label, target in [("unicode_path_init", f"{NAME}/__init__.py"),
                          ("unicode_path_torch", "torch/__init__.py"),
                          ("unicode_path_metadata", f"{DIST}/METADATA")]:
        yield label, build_wheel({**BASE_FILES, decoy: b"import os\n"},
                                 extras={decoy: unicode_path_field(target, decoy)})
    yield "unicode_path_same", build_wheel(
        {**BASE_FILES, decoy: b"x=1\n"}, extras={decoy: unicode_path_field(decoy, decoy)})
    # .data/purelib and platlib install beside the top level, over the checked members.
    for label, shadow in [("shadow_purelib_init", f"{DATA}/purelib/{NAME}/__init__.py"),
                          ("shadow_platlib_core", f"{DATA}/platlib/{NAME}/core.py"),
                          ("shadow_purelib_case", f"{DATA}/purelib/{NAME}/Core.py")]:
        yield label, build_wheel({**BASE_FILES, shadow: b"import os\n"})
    yield "record_blank_line", build_wheel(BASE_FILES, record_edit=lambda r: r.replace("\n", "\n\n", 1))
    yield "comment_end_signature", build_wheel(BASE_FILES, comment=b"PK\x05\x06")
    # Console scripts behind the line ends and section names importlib.metadata reads its way.
    hidden = f"pip = {NAME}.core:sageattn"
    ends = ["\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "\r"]
    texts = [f"[console_scripts]\nsageattention-x = {NAME}.core:sageattn{end}{hidden}\n" for end in ends]
    texts += [f"[[console_scripts]]\n{hidden}\n", f"[]console_scripts]\n{hidden}\n",
              f"[console_scripts]\n;{hidden}\n"]
    for i, text in enumerate(texts):
        yield f"entry_point_hidden_{i}", build_wheel({**BASE_FILES, f"{DIST}/entry_points.txt": text.encode()})
    for command in ["pip", "pip3", "python3", "torchrun", "sageattention-run", "SageAttention_X"]:
        ep = f"[console_scripts]\n{command} = {NAME}.core:sageattn\n"
        yield f"entry_point_{command}", build_wheel({**BASE_FILES, f"{DIST}/entry_points.txt": ep.encode()})
    for i, text in enumerate(metadata_mutants(rng, count)):
        yield f"metadata_{i}", build_wheel(BASE_FILES, metadata=text)
    for i in range(count):
        yield f"flip_{i}", flip_bytes(rng, base)


# ---- the real readers ----

def zipfile_view(path):
    """[(name, sha256)] as CPython's zipfile reads the archive, or None if it cannot."""
    try:
        with zipfile.ZipFile(path) as z:
            return [(i.filename, digest(z.read(i))) for i in z.infolist() if not i.is_dir()]
    except Exception:  # any failure: the installer cannot read it either
        return None


ZIPFILE_PROBE = """
import base64, hashlib, json, sys, zipfile
out = {}
for path in json.load(sys.stdin):
    try:
        with zipfile.ZipFile(path) as z:
            out[path] = sorted((i.filename, base64.urlsafe_b64encode(hashlib.sha256(z.read(i)).digest())
                                .rstrip(b"=").decode()) for i in z.infolist() if not i.is_dir())
    except Exception:
        out[path] = None
print(json.dumps(out))
"""


def every_python():
    """sys.executable and every CPython 3.9+ pyenv has here."""
    found = [sys.executable]
    root = subprocess.run(["pyenv", "root"], capture_output=True, text=True).stdout.strip() \
        if shutil.which("pyenv") else os.path.expanduser("~/.pyenv")
    for python in sorted(glob.glob(os.path.join(root, "versions", "3.*", "bin", "python3"))):
        version = os.path.basename(os.path.dirname(os.path.dirname(python))).split(".")
        if len(version) >= 2 and version[1].isdigit() and int(version[1]) >= 9:
            found.append(python)
    return found


def zipfile_views(python, paths):
    """{path: [(name, sha256)] or None} as that Python's zipfile reads each archive."""
    done = subprocess.run([python, "-c", ZIPFILE_PROBE], input=json.dumps(paths), capture_output=True,
                          text=True)
    if done.returncode:
        raise SystemExit(f"{python}: the zipfile probe failed: {done.stderr[-500:]}")
    return {p: [tuple(x) for x in v] if v is not None else None for p, v in json.loads(done.stdout).items()}


def email_requires(path):
    with zipfile.ZipFile(path) as z:
        text = z.read(f"{DIST}/METADATA").decode("utf-8")
    return [v.strip() for v in (email.message_from_string(text).get_all("Requires-Dist") or [])]


def pip_install(path, target):
    """{relative path: sha256} of what pip wrote into target, and the installed requirements."""
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                           "--no-compile", "--disable-pip-version-check", "--target", target,
                           path], capture_output=True, text=True)
    if done.returncode:
        return None, None, done.stderr.strip().splitlines()[-1:]
    written = {}
    for root, _, names in os.walk(target):
        for n in names:
            full = os.path.join(root, n)
            with open(full, "rb") as f:
                written[os.path.relpath(full, target)] = digest(f.read())
    probe = ("import importlib.metadata as m, json, sys; "
             f"d = m.distribution('{NAME}'); print(json.dumps(d.requires or []))")
    env = dict(os.environ, PYTHONPATH=target)
    req = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
    return written, json.loads(req.stdout) if req.returncode == 0 else None, None


def expected_install(files):
    """What pip should write into --target for the verified files: site-packages paths."""
    out, commands = {}, set()
    for f in files:
        name = f["name"]
        if name.startswith(f"{DATA}/"):
            scheme, _, rest = name[len(DATA) + 1:].partition("/")
            if scheme in ("purelib", "platlib", "data"):  # data: --target is the prefix
                out[rest] = f["sha256"]
            elif scheme == "scripts":
                commands.add(rest)
            continue  # headers go outside the target
        if name == f"{DIST}/RECORD":
            continue  # pip writes its own
        out[name] = f["sha256"]
    return out, commands


def compare(path, report, pip_budget, failures):
    files = sorted((f["name"], f["sha256"]) for f in report["files"])
    view = zipfile_view(path)
    if view is None:
        failures.append("zipfile cannot read a wheel verify-wheel accepted")
        return pip_budget
    if sorted(view) != files:
        failures.append(f"zipfile lists {sorted(set(view) ^ set(files))[:4]} differently")
    requires = email_requires(path)
    if requires != report["requires_dist"]:
        failures.append(f"email parser: Requires-Dist {requires}, verify-wheel {report['requires_dist']}")
    if pip_budget <= 0:
        return pip_budget
    with tempfile.TemporaryDirectory() as target:
        written, installed_requires, error = pip_install(path, target)
        if written is None:
            failures.append(f"pip could not install a verified wheel: {error}")
            return pip_budget - 1
        want, commands = expected_install(report["files"])
        ignore = {f"{DIST}/INSTALLER", f"{DIST}/REQUESTED", f"{DIST}/RECORD", f"{DIST}/direct_url.json"}
        got = {k: v for k, v in written.items() if k not in ignore and not k.startswith("bin/")}
        bins = {k[4:] for k in written if k.startswith("bin/")}
        if got != want:
            diff = sorted(set(got.items()) ^ set(want.items()))[:4]
            failures.append(f"pip installed other files than verified: {diff}")
        owned = {b for b in bins if b in commands or b.lower().replace("_", "-").startswith(NAME)}
        if bins != owned:
            failures.append(f"pip wrote commands {sorted(bins - owned)} the wheel does not own")
        if installed_requires is not None and installed_requires != report["requires_dist"]:
            failures.append(f"installed requirements {installed_requires}, verified {report['requires_dist']}")
    return pip_budget - 1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("sagebuild")
    parser.add_argument("--count", type=int, default=150, help="random mutants per family")
    parser.add_argument("--pip-installs", type=int, default=25,
                        help="accepted wheels also installed with pip (about a second each)")
    parser.add_argument("--seed", type=int, default=random.SystemRandom().randint(0, 2**31))
    parser.add_argument("--every-python", action="store_true",
                        help="also read the accepted wheels with every CPython 3.9+ of pyenv")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="differential-install-")
    try:
        paths, labels = [], {}
        for i, (label, data) in enumerate(cases(rng, args.count)):
            folder = os.path.join(work, f"{i:05d}")
            os.mkdir(folder)
            path = os.path.join(folder, WHEEL_NAME)
            with open(path, "wb") as f:
                f.write(data)
            paths.append(path)
            labels[path] = label
        done = subprocess.run([args.sagebuild, "verify-wheel", "--json", "--select", CHECKS,
                               "--threads", "1", *paths], capture_output=True, text=True)
        if done.returncode not in (0, 5):
            print(f"verify-wheel exited {done.returncode}: {done.stderr[-2000:]}")
            return 1
        reports = {r["path"]: r for r in json.loads(done.stdout)}
        accepted = [p for p in paths if reports[p]["ok"]]
        must_accept = {"base", "data_scripts_own", "data_share_own", "data_purelib_own",
                       "entry_point_sageattention-run", "entry_point_SageAttention_X",
                       "unicode_path_same"}
        must_refuse = {"second_central_directory", "junk_in_central_directory", "junk_before_end",
                       "record_left_out_of_count", "comment_hides_end_record", "flag_bit_5",
                       "flag_bit_6", "symlink_under_fat", "data_scripts_pip", "data_data_python",
                       "data_data_torch", "data_unknown_scheme", "data_purelib_torch",
                       "entry_point_pip", "entry_point_pip3", "entry_point_python3",
                       "entry_point_torchrun", "unicode_path_init", "unicode_path_torch",
                       "unicode_path_metadata", "shadow_purelib_init", "shadow_platlib_core",
                       "shadow_purelib_case", "record_blank_line", "comment_end_signature",
                       *(label for label in labels.values() if label.startswith("entry_point_hidden_"))}
        failures = []
        for p in paths:
            label, ok = labels[p], reports[p]["ok"]
            if label in must_accept and not ok:
                failures.append((label, f"refused: {reports[p]['findings'][:2]}"))
            if label in must_refuse and ok:
                failures.append((label, "accepted"))
        pythons = every_python() if args.every_python else [sys.executable]
        for python in pythons[1:]:
            views = zipfile_views(python, accepted)
            for p in accepted:
                files = sorted((f["name"], f["sha256"]) for f in reports[p]["files"])
                if views[p] != files:
                    failures.append((labels[p], f"{python}'s zipfile reads it otherwise: "
                                                f"{views[p] and sorted(set(views[p]) ^ set(files))[:4]}"))
        pip_budget = args.pip_installs
        # The named cases first, so that each is installed; then the accepted mutants.
        for p in sorted(accepted, key=lambda p: (not labels[p].startswith(("base", "data", "entry", "unicode")), p)):
            found = []
            pip_budget = compare(p, reports[p], pip_budget, found)
            failures += [(labels[p], f) for f in found]
        print(f"install differential (seed {args.seed}): {len(paths)} wheels, {len(accepted)} "
              f"accepted by verify-wheel, read by the zipfile of {len(pythons)} Python"
              f"{'s' if len(pythons) > 1 else ''}, {min(args.pip_installs, len(accepted))} installed "
              f"with pip; {len(failures)} disagreements")
        for label, why in failures[:30]:
            print(f"  {label}: {why}")
        return 1 if failures else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
