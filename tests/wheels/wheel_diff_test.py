#!/usr/bin/env python3
"""wheel_diff.py's verdicts on wheels made here: identical; differing only in an allowed member
(and RECORD's line for it); differing in a member not allowed; differing in RECORD beyond the
allowed lines; a member only one has."""
import io
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checklib import check, finish  # noqa: E402
from wheel_diff import compare, sections  # noqa: E402

DIST = "demo-1.0.dist-info"


def wheel(path, files, record=None):
    """A wheel of `files` ({name: bytes}) with a RECORD naming each (its hash replaced by the
    content, which is all a comparison needs); `record` overrides RECORD's text."""
    lines = [f"{name},sha256={data.decode()},{len(data)}" for name, data in sorted(files.items())]
    with zipfile.ZipFile(path, "w") as z:
        for name, data in sorted(files.items()):
            z.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), data)
        text = record if record is not None else "\n".join(lines + [f"{DIST}/RECORD,,"]) + "\n"
        z.writestr(zipfile.ZipInfo(f"{DIST}/RECORD", (1980, 1, 1, 0, 0, 0)), text)
    return path


def verdict(a, b, allow=()):
    printed = io.StringIO()
    ok = compare(a, b, allow, out=lambda line: printed.write(line + "\n"))
    return ok, printed.getvalue()


def main():
    base = {"demo/__init__.py": b"x = 1", f"{DIST}/sagebuild.json": b'{"python": "3.11"}'}
    other_json = dict(base, **{f"{DIST}/sagebuild.json": b'{"python": "3.13"}'})
    other_code = dict(base, **{"demo/__init__.py": b"x = 2"})
    allow = ["*.dist-info/sagebuild.json"]
    with tempfile.TemporaryDirectory() as d:
        a = wheel(os.path.join(d, "a.whl"), base)
        same = wheel(os.path.join(d, "same.whl"), base)
        json_only = wheel(os.path.join(d, "json.whl"), other_json)
        code = wheel(os.path.join(d, "code.whl"), other_code)
        record = wheel(os.path.join(d, "record.whl"), other_json,
                       record=f"demo/__init__.py,sha256=forged,5\n{DIST}/RECORD,,\n")
        extra = wheel(os.path.join(d, "extra.whl"), dict(base, **{"demo/extra.py": b""}))

        ok, text = verdict(a, same)
        check("identical wheels are identical", ok and "identical" in text, text)
        ok, text = verdict(a, json_only)
        check("a differing provenance fails without --allow", not ok, text)
        ok, text = verdict(a, json_only, allow)
        check("a differing provenance passes with --allow, its keys named",
              ok and "python: '3.11' vs '3.13'" in text, text)
        ok, text = verdict(a, code, allow)
        check("a differing package file fails whatever is allowed", not ok, text)
        ok, text = verdict(a, record, allow)
        check("RECORD differing beyond the allowed members' lines fails", not ok, text)
        ok, text = verdict(a, extra, allow)
        check("a member only one wheel has fails", not ok and "only in second" in text, text)
        # Two shared libraries that differ in one string: the ELF sections are named (also those
        # whose index readelf prints with a space, "[ 4]") and only .rodata (and the build-id,
        # which hashes it) differ.
        cc = shutil.which("cc") or shutil.which("gcc")
        if cc:
            libs = []
            for word in ("one", "two"):
                src, lib = os.path.join(d, f"{word}.c"), os.path.join(d, f"lib{word}.so")
                with open(src, "w") as f:
                    f.write(f'const char* word(void) {{ return "{word}"; }}\n')
                subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", lib, src], check=True)
                libs.append(open(lib, "rb").read())
            one, two = sections(libs[0]), sections(libs[1])
            differing = sorted(n for n in one if one[n] != two.get(n))
            check("ELF sections are named, the index's space notwithstanding",
                  ".dynstr" in one and ".text" in one and ".gnu.hash" in one, str(sorted(one)))
            check("only the sections that differ are reported", ".rodata" in differing
                  and ".text" not in differing and ".dynstr" not in differing, str(differing))
        else:
            print("skip the ELF section comparison: no C compiler here")
    return finish("wheel_diff")


if __name__ == "__main__":
    sys.exit(main())
