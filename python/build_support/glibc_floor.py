"""Keeps a shared library's glibc symbol versions at or below a floor (the manylinux policy's),
when it is linked on a newer glibc: glibc 2.34 moved pthread_*, dl*, sem_* and friends into libc
under new default versions (pthread_create@@GLIBC_2.34) and kept the old ones as compatibility
versions (pthread_create@GLIBC_2.2.5). A library that links the CUDA runtime statically
references dozens of them, and linking on a new glibc binds each to its new default.

Given the objects and archives of a link, this writes:
- a C++ file whose top-level assembly defines __wrap_<sym> for each such symbol, a jump to the
  newest version of <sym> at or below the floor (what linking on a glibc of the floor's age would
  bind), and
- a linker response file with -Wl,--wrap=<sym> for each, so that every reference in the inputs,
  static archives included, goes through the wrapper.

Three newer glibc symbols that have no older version get a stand-in instead (REPLACEMENTS): the
stat family (2.33) calls the __fxstat64 family it replaced, arc4random (2.36) reads
getentropy (2.25), and __libc_single_threaded (2.32), a flag libstdc++'s headers read, becomes a
hidden copy of our own that always says "threads may exist" (atomic reference counts: correct,
if a little slower). Anything else over the floor is left alone: the manylinux check after the
build names it (sagebuild build, verify-wheel B003).

Usage: glibc_floor.py --floor 2.28 --cpp OUT.cpp --flags OUT.rsp [--cc CC] [--nm NM]
                      [--readelf READELF] INPUT...
"""

import argparse
import re
import subprocess
import sys

LIBRARIES = ["libc.so.6", "libm.so.6"]


def version_key(version):
    """GLIBC_2.2.5 -> (2, 2, 5); None for other families."""
    match = re.fullmatch(r"GLIBC_(\d+(?:\.\d+)*)", version)
    return tuple(int(part) for part in match.group(1).split(".")) if match else None


def undefined_symbols(nm, paths):
    out = subprocess.run(
        [nm, "-u", "-P"] + paths, capture_output=True, text=True, check=True
    ).stdout
    names = set()
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 2 and fields[1] in ("U", "w", "v"):
            names.add(fields[0].split("@")[0])
    return names


def glibc_versions(cc, readelf, library):
    """{symbol: (type, default version, [other versions])} of one glibc library."""
    path = subprocess.run(
        [cc, f"-print-file-name={library}"], capture_output=True, text=True, check=True
    ).stdout.strip()
    out = subprocess.run(
        [readelf, "--dyn-syms", "-W", path], capture_output=True, text=True, check=True
    ).stdout
    symbols: dict[str, list] = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) < 8 or not fields[0].endswith(":") or fields[6] == "UND":
            continue
        kind, name = fields[3], fields[7]
        default = "@@" in name
        name, _, version = name.replace("@@", "@").partition("@")
        if not version:
            continue
        entry = symbols.setdefault(name, [kind, None, []])
        if default:
            entry[1] = version
        else:
            entry[2].append(version)
    return symbols


# Stand-ins for symbols newer than any floor we use, as C++ definitions of __wrap_<name> (or, for
# data, of <name> itself). {stat_ver} and {xstat_version} are filled in per machine.
REPLACEMENTS = {
    "fstat64": (
        "int __wrap_fstat64(int fd, struct stat64* buf) "
        "{{ return __sagebuild_fxstat64({stat_ver}, fd, buf); }}"
    ),
    "stat64": (
        "int __wrap_stat64(const char* path, struct stat64* buf) "
        "{{ return __sagebuild_xstat64({stat_ver}, path, buf); }}"
    ),
    "lstat64": (
        "int __wrap_lstat64(const char* path, struct stat64* buf) "
        "{{ return __sagebuild_lxstat64({stat_ver}, path, buf); }}"
    ),
    "fstatat64": (
        "int __wrap_fstatat64(int dir, const char* path, struct stat64* buf, int flags) "
        "{{ return __sagebuild_fxstatat64({stat_ver}, dir, path, buf, flags); }}"
    ),
    "arc4random": (
        "unsigned __wrap_arc4random(void) "
        "{{ unsigned r = 0; while (getentropy(&r, sizeof r) != 0) {{}} return r; }}"
    ),
}
XSTAT = {
    "fstat64": "__fxstat64",
    "stat64": "__xstat64",
    "lstat64": "__lxstat64",
    "fstatat64": "__fxstatat64",
}
XSTAT_DECLARATIONS = {
    "__fxstat64": "int __sagebuild_fxstat64(int, int, struct stat64*);",
    "__xstat64": "int __sagebuild_xstat64(int, const char*, struct stat64*);",
    "__lxstat64": "int __sagebuild_lxstat64(int, const char*, struct stat64*);",
    "__fxstatat64": "int __sagebuild_fxstatat64(int, int, const char*, struct stat64*, int);",
}
# glibc's _STAT_VER for the __xstat family: the kernel's stat layout.
STAT_VER = {"x86_64": 1, "aarch64": 0}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--floor", required=True, help="newest glibc allowed, e.g. 2.28")
    parser.add_argument("--cpp", required=True)
    parser.add_argument("--flags", required=True)
    parser.add_argument("--cc", default="cc")
    parser.add_argument("--nm", default="nm")
    parser.add_argument("--readelf", default="readelf")
    parser.add_argument("inputs", nargs="+")
    args = parser.parse_args()
    floor = tuple(int(part) for part in args.floor.split("."))
    machine = subprocess.run(
        [args.cc, "-dumpmachine"], capture_output=True, text=True, check=True
    ).stdout.strip()
    jump = {"x86_64": "jmp", "aarch64": "b"}.get(machine.split("-")[0])
    arch = machine.split("-")[0]
    wanted = undefined_symbols(args.nm, args.inputs)
    glibc = {}
    for library in LIBRARIES:
        glibc.update(glibc_versions(args.cc, args.readelf, library))
    pinned, replaced, data = {}, [], []
    for name, (kind, default, others) in glibc.items():
        if name not in wanted or not default:
            continue
        key = version_key(default)
        if key is None or key <= floor:
            continue
        older = [v for v in others if version_key(v) and version_key(v) <= floor]
        if kind in ("FUNC", "IFUNC") and older:
            pinned[name] = max(older, key=version_key)
        elif name in REPLACEMENTS and arch in STAT_VER:
            replaced.append(name)
        elif name == "__libc_single_threaded":
            data.append(name)
    lines = [
        "// Written by python/build_support/glibc_floor.py: glibc functions pinned to their",
        f"// newest versions at or below glibc {args.floor}, and stand-ins for newer ones",
        "// (see that file).",
    ]
    if (pinned or replaced) and not jump:
        print(
            f"glibc_floor: no wrapper form for {machine}; symbols stay at their defaults",
            file=sys.stderr,
        )
        pinned, replaced = {}, []
    if replaced:
        lines += ["#include <sys/stat.h>", "#include <unistd.h>", 'extern "C" {']
        for name in sorted(replaced):
            xstat = XSTAT.get(name)
            if xstat:
                _, default_version, other_versions = glibc.get(xstat, [None, None, []])
                old = [
                    v
                    for v in [default_version] + other_versions
                    if v and version_key(v) and version_key(v) <= floor
                ]
                if not old:
                    continue
                lines.append(XSTAT_DECLARATIONS[xstat])
                lines.append(
                    f'asm(".symver __sagebuild_{xstat[2:]}, {xstat}@{min(old, key=version_key)}");'
                )
            lines.append(
                '__attribute__((visibility("hidden"))) '
                + REPLACEMENTS[name].format(stat_ver=STAT_VER[arch])
            )
            pinned.setdefault(name, None)
        lines.append("}")
    for name in data:
        lines.append(f'extern "C" __attribute__((visibility("hidden"))) char {name};')
        lines.append(f"char {name} = 0;")
    for name, version in sorted(pinned.items()):
        if version is None:
            continue  # a stand-in above
        wrapped = f"__sagebuild_glibc_{name}"
        lines.append(f'asm(".symver {wrapped}, {name}@{version}\\n"')
        lines.append(f'    ".globl __wrap_{name}\\n.hidden __wrap_{name}\\n"')
        lines.append(f'    ".type __wrap_{name}, %function\\n__wrap_{name}:\\n"')
        lines.append(f'    "  {jump} {wrapped}{"@PLT" if jump == "jmp" else ""}\\n");')
    with open(args.cpp, "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(args.flags, "w") as f:
        f.write("".join(f"-Wl,--wrap={name}\n" for name in sorted(pinned)))
    print(
        f"glibc_floor: {len(pinned) - len(replaced)} glibc functions pinned at or below "
        f"{args.floor}; stand-ins for {', '.join(sorted(replaced + data)) or 'none'}"
    )


if __name__ == "__main__":
    main()
