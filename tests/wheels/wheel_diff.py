"""Two wheels compared member by member: prints each member that only one has or whose bytes
differ (size and sha256 of both), for a differing shared library the ELF sections that differ
(readelf), and for a differing JSON member the keys whose values differ.

--allow GLOB (repeatable) names members that may differ (e.g. '*.dist-info/sagebuild.json', the
provenance, which names the build's Python and CMake): they are still listed, and RECORD may
differ only in their lines. Exit 0 when the files are byte-identical or differ only where
allowed, 1 otherwise.

Usage: wheel_diff.py A.whl B.whl [--allow GLOB ...]"""
import argparse
import fnmatch
import hashlib
import json
import re
import subprocess
import sys
import tempfile
import zipfile


def members(path):
    with zipfile.ZipFile(path) as z:
        return {i.filename: (i, z.read(i)) for i in z.infolist()}


def sections(data):
    """{section name: sha256} of an ELF file, by objcopy -O binary --only-section."""
    with tempfile.NamedTemporaryFile(suffix=".so") as f:
        f.write(data)
        f.flush()
        listing = subprocess.run(["readelf", "-SW", f.name], capture_output=True, text=True).stdout
        # "  [ 4] .dynstr STRTAB ...": the index may hold a space, so the name follows the "]".
        names = [m.group(1) for m in re.finditer(r"^\s*\[\s*\d+\]\s+(\S+)", listing, re.M)]
        out = {}
        for name in names:
            with tempfile.NamedTemporaryFile() as part:
                subprocess.run(["objcopy", "-O", "binary", f"--only-section={name}", f.name,
                                part.name], capture_output=True)
                out[name] = hashlib.sha256(open(part.name, "rb").read()).hexdigest()[:16]
        return out


def json_differences(a, b, prefix=""):
    """The dotted keys whose values differ between two parsed JSON values."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in sorted(set(a) | set(b)):
            out += json_differences(a.get(key), b.get(key), f"{prefix}{key}.")
        return out
    return [] if a == b else [f"{prefix[:-1] or '(value)'}: {a!r} vs {b!r}"]


def record_lines(data, allowed):
    """RECORD's lines, less those of allowed members (their hashes may differ)."""
    lines = data.decode("utf-8", "replace").splitlines()
    return [line for line in lines if not allowed(line.split(",", 1)[0])]


def compare(a_path, b_path, allow=(), out=print):
    """Prints the differences; returns True when only allowed members differ."""
    if open(a_path, "rb").read() == open(b_path, "rb").read():
        out(f"wheel_diff: identical ({a_path}, {b_path})")
        return True

    def allowed(name):
        return any(fnmatch.fnmatchcase(name, glob) for glob in allow)

    a, b = members(a_path), members(b_path)
    ok = True
    for name in sorted(set(a) | set(b)):
        if name not in a or name not in b:
            out(f"  only in {'first' if name in a else 'second'}: {name}")
            ok = False
            continue
        (ia, da), (ib, db) = a[name], b[name]
        if da != db:
            is_record = name.endswith(".dist-info/RECORD")
            tolerated = allowed(name) or (
                is_record and bool(allow) and record_lines(da, allowed) == record_lines(db, allowed))
            note = " (allowed)" if allowed(name) else " (only in allowed members' lines)" if tolerated else ""
            out(f"  differs: {name} ({len(da)} B {hashlib.sha256(da).hexdigest()[:16]} vs "
                f"{len(db)} B {hashlib.sha256(db).hexdigest()[:16]}){note}")
            ok = ok and tolerated
            if da[:4] == b"\x7fELF" and db[:4] == b"\x7fELF":
                sa, sb = sections(da), sections(db)
                for s in sorted(set(sa) | set(sb)):
                    if sa.get(s) != sb.get(s):
                        out(f"      section {s}: {sa.get(s)} vs {sb.get(s)}")
            elif name.endswith(".json"):
                try:
                    for line in json_differences(json.loads(da), json.loads(db)):
                        out(f"      {line}")
                except ValueError:
                    pass
        elif ia.date_time != ib.date_time or ia.external_attr != ib.external_attr:
            out(f"  entry header differs: {name} ({ia.date_time} {ia.external_attr:o} vs "
                f"{ib.date_time} {ib.external_attr:o})")
            ok = False
    out(f"wheel_diff: {'equal but for allowed members' if ok else 'different'} "
        f"({a_path}, {b_path})")
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--allow", action="append", default=[], metavar="GLOB")
    args = parser.parse_args()
    return 0 if compare(args.a, args.b, args.allow) else 1


if __name__ == "__main__":
    sys.exit(main())
