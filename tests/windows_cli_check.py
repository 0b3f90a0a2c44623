#!/usr/bin/env python3
"""The Windows build of sagebuild (MinGW-w64, run under Wine) against the Linux build of the same
checkout: every command that needs no build, run with the same arguments in the same folder by
both, must give the same exit code, the same output (Windows' CRLF and the separator of paths the
tool joins aside) and the same files.

Commands: profiles, validate (matrix.yaml and every broken file under testdata/bad), matrix for
every profile x platform x format, bake for every profile, verify-wheel over a corpus of good and
broken wheels (text and JSON), parse-wheel-names, index, completion, and usage errors.

Usage: windows_cli_check.py --linux SAGEBUILD --windows SAGEBUILD.EXE [--wine WINE]
Run by scripts/windows-test.sh, which builds both and sets up Wine.
"""
import argparse
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklib import check, finish  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parent.parent
TESTDATA = REPO / "tools" / "sagebuild" / "testdata"


def windows_separators_as_posix(text):
    """A path the tool joined on Windows (`folder\\file`) as the Linux build prints it: the one
    difference in output allowed besides CRLF (paths the user typed are printed as typed)."""
    return re.sub(r"(?<=[\w.-])\\(?=[\w.-])", "/", text)


def run(argv, cwd, env):
    # Its own process group, killed whole on a timeout: a helper Wine starts (a crash debugger)
    # must not keep the pipes open and the check waiting.
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        stderr += b"\n(timed out after 120 s)"
    # Windows' C runtime writes CRLF on text streams; that is the only difference allowed.
    text = lambda b: b.decode("utf-8", "replace").replace("\r\n", "\n")  # noqa: E731
    return proc.returncode, text(stdout), text(stderr)


def files_under(folder):
    """{relative path: bytes} of every file below folder (CRLF kept: files must agree exactly)."""
    found = {}
    for path in sorted(pathlib.Path(folder).rglob("*")):
        if path.is_file():
            found[path.relative_to(folder).as_posix()] = path.read_bytes()
    return found


def write_wheels(folder):
    """A few wheels for verify-wheel, index and parse-wheel-names: a well-formed pure one, one
    whose RECORD lies about a digest, one with a member outside the archive, and a name that is
    not a wheel name."""
    def wheel(name, members):
        path = folder / name
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
            for member, data in members.items():
                zf.writestr(member, data)
        return path

    import base64
    import hashlib

    def record(members):
        rows = []
        for member, data in members.items():
            digest = base64.urlsafe_b64encode(hashlib.sha256(data.encode()).digest()).rstrip(b"=").decode()
            rows.append(f"{member},sha256={digest},{len(data.encode())}")
        return rows

    dist = "demo-1.0.dist-info"
    good = {
        "demo/__init__.py": "VALUE = 1\n",
        f"{dist}/METADATA": "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n",
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    rows = record(good) + [f"{dist}/RECORD,,"]
    wheel("demo-1.0-py3-none-any.whl", {**good, f"{dist}/RECORD": "\n".join(rows) + "\n"})
    lying = dict(good)
    lying_rows = record(good)
    lying["demo/__init__.py"] = "VALUE = 2\n"
    wheel("demo-1.0-py3-none-manylinux_2_28_x86_64.whl",
          {**lying, f"{dist}/RECORD": "\n".join(lying_rows + [f"{dist}/RECORD,,"]) + "\n"})
    escaping = {**good, "../outside.py": "x = 1\n"}
    wheel("demo-1.0-py3-none-win_amd64.whl",
          {**escaping, f"{dist}/RECORD": "\n".join(record(escaping) + [f"{dist}/RECORD,,"]) + "\n"})
    wheel("not-a-wheel-name.whl", good)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--linux", required=True)
    parser.add_argument("--windows", required=True)
    parser.add_argument("--wine", default="wine")
    args = parser.parse_args()
    linux = [os.path.abspath(args.linux)]
    windows = [args.wine, os.path.abspath(args.windows)]

    env = dict(os.environ)
    for name in list(env):
        if name.startswith(("GITHUB_", "SAGEBUILD_", "CI")):
            del env[name]
    env.update(NO_COLOR="1", TERM="dumb", WINEDEBUG="-all")

    # Both run from the repository (its matrix.yaml, the version file it names) on files under
    # build/windows/cli-check, named by the same relative paths.
    work = REPO / "build" / "windows" / "cli-check"
    shutil.rmtree(work, ignore_errors=True)
    wheels = work / "wheels"
    wheels.mkdir(parents=True)
    try:
        write_wheels(wheels)
        rel = lambda path: path.relative_to(REPO).as_posix()  # noqa: E731
        wheel_paths = sorted(rel(p) for p in wheels.iterdir())
        out = work / "out"

        run(windows + ["--version"], REPO, env)  # Wine's first start in a prefix may say things
        profiles = json.loads(run(linux + ["profiles", "--format", "json"], REPO, env)[1])
        names = sorted(p["name"] for p in profiles)
        commands = [["profiles"], ["profiles", "--format", "json"], ["validate"], ["--help"],
                    ["matrix", "--help"], ["completion", "bash"], ["completion", "zsh"],
                    ["matrix", "--profile", "no-such-profile"], ["no-such-command"],
                    ["matrix", "--profile"], ["verify-wheel"]]
        commands += [["--matrix", rel(p), "validate"] for p in sorted((TESTDATA / "bad").glob("*.yaml"))]
        for name in names:
            for platform in ("linux", "windows", "all"):
                for fmt in ("table", "json", "github"):
                    commands.append(["matrix", "--profile", name, "--platform", platform, "--format", fmt])
            commands.append(["bake", "--profile", name, "--ca-bundle", "", "-o", rel(out / "docker-bake.json")])
        for wheel in wheel_paths:
            commands.append(["verify-wheel", wheel])
            commands.append(["verify-wheel", "--format", "json", wheel])
        commands.append(["parse-wheel-names", *[pathlib.PurePosixPath(w).name for w in wheel_paths]])
        commands.append(["index", "--no-verify", rel(wheels), "-o", rel(out / "site")])

        agreed = 0
        for command in commands:
            results = []
            for binary in (linux, windows):
                shutil.rmtree(out, ignore_errors=True)
                out.mkdir()
                code, stdout, stderr = run(binary + command, REPO, env)
                if binary is windows:
                    stdout, stderr = windows_separators_as_posix(stdout), windows_separators_as_posix(stderr)
                results.append((code, stdout, stderr, files_under(out)))
            same = results[0] == results[1]
            agreed += same
            detail = ""
            if not same:
                (lc, lo, le, lf), (wc, wo, we, wf) = results
                detail = (f"exit {lc} vs {wc}\n--- linux stdout\n{lo[:1500]}\n--- windows stdout\n{wo[:1500]}"
                          f"\n--- linux stderr\n{le[:1500]}\n--- windows stderr\n{we[:1500]}"
                          f"\n--- files differing: {sorted(k for k in set(lf) | set(wf) if lf.get(k) != wf.get(k))}")
            check("same result: sagebuild " + " ".join(command), same, detail)
        print(f"windows-cli: {agreed} of {len(commands)} commands agree")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return finish("windows-cli")


if __name__ == "__main__":
    sys.exit(main())
