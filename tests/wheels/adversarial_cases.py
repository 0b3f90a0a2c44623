"""The adversarial families of the verify-wheel corpus: wheels a strict publisher must refuse
although every file in them is well formed: archives whose local headers, central directory,
data descriptors or zip64 records disagree, entries that overlap, names that are unsafe or
collide once normalized, content that installs outside the package (.pth files, another
distribution's top-level package), and metadata that pins torch twice or not at all.

add_cases(case, binaries) adds them through make_corpus's `case(name, expected checks, ...)`.
"""
import struct
import unicodedata
import zipfile
import zlib

import zip_forge as zf

NAME, VERSION = "sageattention", "2.2.0"
DATA = f"{NAME}-{VERSION}.data"


def forged(edit, **layout):
    """A patch for Wheel.patch: the archive taken apart, edited, and written again."""
    def patch(archive):
        entries = zf.take_apart(archive)
        entries = edit(entries) or entries
        return zf.put_together(entries, **layout)
    return patch


def member(entries, suffix):
    return next(e for e in entries if e.name.decode("utf-8", "replace").endswith(suffix))


INNER_DATA = b"# inner\n" * 40


def inner_member():
    return zf.entry(f"{NAME}/inner.py", INNER_DATA)


def outer_data():
    """What the outer member stores: the inner member's local header and data."""
    inner = inner_member()
    return zf.local_header(inner) + inner.raw


def nested(entries):
    """Member inner.py lies inside the stored data of member outer.bin (its local header and data
    are outer's bytes) and the central directory lists both: the overlap of a non-recursive zip
    bomb, with every name, CRC and size true."""
    outer = member(entries, "/outer.bin")
    listed = member(entries, "/inner.py")
    inner = inner_member()
    listed.raw, listed.crc, listed.csize, listed.usize = b"", inner.crc, inner.csize, inner.usize
    listed.method, listed.skip_local, listed.inside = inner.method, True, outer


def add_cases(case, binaries):
    # ---- the archive's records disagree ----
    w = case("x_local_name_differs", ["A001"])
    w.patch = forged(lambda es: setattr(member(es, "__init__.py"), "lh_name",
                                        f"{NAME}/__init__.pz".encode()))
    w = case("x_local_crc_differs", ["A001"])
    w.patch = forged(lambda es: setattr(member(es, "__init__.py"), "lh_crc",
                                        member(es, "__init__.py").crc ^ 1))
    w = case("x_local_size_differs", ["A001"])
    w.patch = forged(lambda es: setattr(member(es, "__init__.py"), "lh_usize",
                                        member(es, "__init__.py").usize + 7))

    def lying_descriptor(es):
        e = member(es, "__init__.py")
        e.flags |= 0x8
        e.descriptor = (e.crc ^ 1, e.csize, e.usize)
    w = case("x_descriptor_lies", ["A001"])
    w.patch = forged(lying_descriptor)
    w = case("x_overlapping_entries", ["A001"])
    stored = zf.zipfile.ZipInfo(f"{NAME}/outer.bin")
    stored.compress_type = zf.zipfile.ZIP_STORED
    w.extra += [(stored, outer_data()), (f"{NAME}/inner.py", INNER_DATA)]
    w.patch = forged(nested)
    w = case("x_zip64_absurd", ["A001"])
    w.patch = forged(lambda es: None, zip64_eocd=(1 << 40, 1 << 50))
    w = case("x_unknown_method", ["A003"])
    w.patch = forged(lambda es: setattr(member(es, "__init__.py"), "method", 99))
    w = case("x_encrypted_entry", ["A003"])
    w.patch = forged(lambda es: setattr(member(es, "__init__.py"), "flags", member(es, "__init__.py").flags | 0x1))

    def gigabytes(es):  # 3 GiB declared for a few bytes, in the central directory and locally
        e = member(es, "__init__.py")
        e.usize = 3 << 30
    w = case("x_gigabytes_declared", ["A007"])
    w.patch = forged(gigabytes)
    w = case("x_junk_before", ["A001"])
    w.patch = forged(lambda es: None, prefix=b"#!/bin/sh\nexit 0\n" * 8)
    w = case("x_junk_after", ["A001"])
    w.patch = forged(lambda es: None, suffix=b"trailing bytes after the end record")
    w = case("x_directory_with_data", ["A001"])
    w.extra.append((f"{NAME}/sub/", b"a directory entry carrying bytes"))
    # ---- names ----
    w = case("x_name_nul", ["A002"])  # (zipfile cuts names at NUL: written by hand)
    w.extra.append((f"{NAME}/a_b.py", b"# x\n"))
    w.record_edit = lambda rows: [[r[0].replace("a_b.py", "a\0b.py"), *r[1:]] for r in rows]
    w.patch = forged(lambda es: setattr(member(es, "/a_b.py"), "name", f"{NAME}/a\0b.py".encode()))
    for label, name in [("x_name_backslash", f"{NAME}\\evil.py"), ("x_name_drive_letter", f"C:/{NAME}/evil.py")]:
        w = case(label, ["A002", "A005"])  # (outside the package too)
        w.extra.append((name, b"# x\n"))
    for label, name in [("x_name_dot_segment", f"{NAME}/./extra.py"),
                        ("x_name_double_slash", f"{NAME}//extra.py"),
                        ("x_name_too_long", f"{NAME}" + ("/" + "d" * 250) * 20 + ".py")]:
        w = case(label, ["A002"])
        w.extra.append((name, b"# x\n"))
    w = case("x_name_not_utf8", ["A002", "R004", "R005"])  # (RECORD cannot name it)
    w.patch = forged(lambda es: setattr(member(es, "__init__.py"), "name", f"{NAME}/".encode() + b"\xff\xfe.py"))
    w = case("x_name_not_utf8_flagged", ["A002", "R004", "R005"])

    def flagged(es):
        e = member(es, "__init__.py")
        e.name, e.flags = f"{NAME}/".encode() + b"\xc3\x28.py", e.flags | 0x800
    w.patch = forged(flagged)
    w = case("x_name_nfc_nfd", ["A002"])
    w.extra.append((unicodedata.normalize("NFC", f"{NAME}/caf\u00e9.py"), b"# nfc\n"))
    w.extra.append((unicodedata.normalize("NFD", f"{NAME}/caf\u00e9.py"), b"# nfd\n"))
    w = case("x_name_unicode_case", ["A002"])
    w.extra.append((f"{NAME}/\u00c4.py", b"# upper\n"))
    w.extra.append((f"{NAME}/\u00e4.py", b"# lower\n"))
    w = case("x_file_and_directory", ["A004"])
    w.extra.append((f"{NAME}/__init__.py/shadow.py", b"# below a file\n"))
    # One member, two names: CPython 3.12+ installs it under its Unicode Path field's name.
    w = case("x_unicode_path_second_name", ["A001"])
    decoy = zipfile.ZipInfo(f"{NAME}/t4_decoy.py")
    target, header = f"{NAME}/__init__.py".encode(), decoy.filename.encode()
    field = b"\x01" + struct.pack("<I", zlib.crc32(header)) + target
    decoy.extra = struct.pack("<HH", 0x7075, len(field)) + field
    w.extra.append((decoy, b"import os\n"))
    # ---- what the wheel installs ----
    w = case("x_top_level_pth", ["A005"])
    w.extra.append((f"{NAME}.pth", b"import os; os.system('true')\n"))
    w = case("x_data_purelib_pth", ["A005"])
    w.extra.append((f"{DATA}/purelib/{NAME}-hook.pth", b"import os\n"))
    w = case("x_data_platlib_other_package", ["A005"])
    w.extra.append((f"{DATA}/platlib/torch/__init__.py", b"raise SystemExit\n"))
    w = case("x_data_purelib_shadow", ["A004"])
    w.extra.append((f"{DATA}/purelib/{NAME}/__init__.py", b"import os\n"))
    w = case("x_entry_point_hidden_by_line_end", ["A005"])
    w.extra.append((f"{NAME}-{VERSION}.dist-info/entry_points.txt",
                    f"[console_scripts]\n{NAME}-run = {NAME}:main\x1cpip = {NAME}:main\n".encode()))
    w = case("x_entry_point_double_brackets", ["A005"])
    w.extra.append((f"{NAME}-{VERSION}.dist-info/entry_points.txt",
                    f"[[console_scripts]]\npip = {NAME}:main\n".encode()))
    w = case("x_record_blank_line", ["R001"])
    w.record_edit = lambda rows: rows[:1] + [[]] + rows[1:]
    w = case("x_two_dist_info", ["A005"])
    w.extra.append(("torch-2.8.0.dist-info/METADATA", b"Name: torch\nVersion: 2.8.0\n"))
    w = case("x_record_row_escapes", ["R005"])
    w.record_edit = lambda rows: rows[:-1] + [["../../outside.py", rows[0][1], rows[0][2]]] + rows[-1:]
    # ---- METADATA and WHEEL ----
    w = case("x_second_torch_pin", ["M003"])
    w.metadata["Requires-Dist"] = ["torch==2.8.*", "numpy", "torch==2.7.*"]
    w = case("x_torch_pin_and_range", ["M003"])
    w.metadata["Requires-Dist"] = ["torch==2.8.*", "torch<2.8"]
    # Each trick below leaves the one right pin visible to a reader that splits lines at "\n"
    # and reads "Key: value" naively, and hides a second requirement (or an unreadable one)
    # from it that Python's email parser, and so pip, reads: refused as metadata that two
    # readers read differently (M001), which leaves no pin to check (M003).
    w = case("x_torch_pin_cr_trick", ["M001", "M003"])
    w.metadata["Summary"] = "SageAttention\rRequires-Dist: torch<2"
    w = case("x_torch_pin_folded", ["M001", "M003"])
    w.metadata["Requires-Dist"] = ["torch==2.8.*", "numpy\n torch<2"]
    w = case("x_header_space_before_colon", ["M001", "M003"])
    w.metadata = {"X-Note ": "hides every line after it from Python's email parser", **w.metadata}
    w = case("x_header_non_ascii_name", ["M001", "M003"])
    w.metadata = {"Caf\u00e9": "hides every line after it from Python's email parser", **w.metadata}
    w = case("x_torch_pin_only_for_an_extra", ["M003"])
    w.metadata["Requires-Dist"] = ["torch==2.8.*; extra == 'cuda'", "numpy"]
    w = case("x_marker_packaging_cannot_evaluate", ["M001"])
    w.metadata["Requires-Dist"] = ["torch==2.8.*", "numpy; os_name ~= 'posix'"]
    w = case("x_torch_pin_never_applies", ["M003"])
    w.metadata["Requires-Dist"] = ["torch==2.8.*; python_version < '3'", "numpy"]
    w = case("x_wheel_version_future", ["H001"])
    w.wheel["Wheel-Version"] = "1.9"
    # ---- binaries ----
    full = binaries["full"]
    shoff_past_end = full[:0x28] + struct.pack("<Q", len(full) + (1 << 20)) + full[0x30:]
    case("x_elf_sections_past_end", ["B001", "B004"], binary=shoff_past_end)
    case("x_rpath_absolute", ["B002"], binary=binaries["rpath_absolute"])
    case("x_rpath_climbs_out", ["B002"], binary=binaries["rpath_climbs"])
