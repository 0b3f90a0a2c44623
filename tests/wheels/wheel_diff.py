"""Two wheels compared member by member: prints each member that only one has or whose bytes
differ (size and sha256 of both), and for a differing shared library the ELF sections that
differ (readelf). Exit 0 when the files are byte-identical, 1 otherwise.
Usage: wheel_diff.py A.whl B.whl"""
import hashlib
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
        names = [line.split()[1] for line in listing.splitlines()
                 if line.strip().startswith("[") and "]" in line and len(line.split()) > 2
                 and not line.strip().startswith("[Nr]")]
        out = {}
        for name in names:
            with tempfile.NamedTemporaryFile() as part:
                subprocess.run(["objcopy", "-O", "binary", f"--only-section={name}", f.name,
                                part.name], capture_output=True)
                out[name] = hashlib.sha256(open(part.name, "rb").read()).hexdigest()[:16]
        return out


def main():
    a_path, b_path = sys.argv[1], sys.argv[2]
    if open(a_path, "rb").read() == open(b_path, "rb").read():
        print(f"wheel_diff: identical ({a_path}, {b_path})")
        return 0
    a, b = members(a_path), members(b_path)
    for name in sorted(set(a) | set(b)):
        if name not in a or name not in b:
            print(f"  only in {'first' if name in a else 'second'}: {name}")
            continue
        (ia, da), (ib, db) = a[name], b[name]
        if da != db:
            print(f"  differs: {name} ({len(da)} B {hashlib.sha256(da).hexdigest()[:16]} vs "
                  f"{len(db)} B {hashlib.sha256(db).hexdigest()[:16]})")
            if da[:4] == b"\x7fELF" and db[:4] == b"\x7fELF":
                sa, sb = sections(da), sections(db)
                for s in sorted(set(sa) | set(sb)):
                    if sa.get(s) != sb.get(s):
                        print(f"      section {s}: {sa.get(s)} vs {sb.get(s)}")
        elif ia.date_time != ib.date_time or ia.external_attr != ib.external_attr:
            print(f"  entry header differs: {name} ({ia.date_time} {ia.external_attr:o} vs "
                  f"{ib.date_time} {ib.external_attr:o})")
    return 1


if __name__ == "__main__":
    sys.exit(main())
