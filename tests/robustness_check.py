#!/usr/bin/env python3
"""Inputs that once crashed or hung sagebuild, each now a clear answer in bounded time:

- matrix.yaml whose profiles form a diamond 24 levels deep ('from' two profiles of the level
  below): validate used to expand the shared bases once per path (25 s at depth 16);
- 20,000 torch releases, as many as the size limit allows (the duplicate-key check was
  quadratic: 42 s for 160,000 keys);
- --matrix /dev/zero, and a file over the size limit (read without end until bad_alloc);
- a package name and a platform tag of 200,000 characters, and a version line of 200,000
  characters in the version file (std::regex overflowed the stack: SIGSEGV);
- non-UTF-8 bytes in matrix.yaml (profiles --format json died) and in a wheel's entry names
  (verify-wheel --json died): the JSON stays valid;
- workflow commands ("::add-mask::", "##[") and escape sequences in matrix.yaml descriptions and
  wheel entry names: printed as text, never as a line a GitHub runner acts on;
- a package.version.regex that backtracks without end (`^(x+x+)+y()`: std::regex never
  returned), package.version.file outside the project (/etc/passwd was read), a FIFO as
  --matrix (blocked), /dev/zero as a summary file or release notes (read without end);
- results files 100,000 levels deep, with a size that is not a number, or a message that closes
  its code block, or of 6 MB (summary);
- wheels made to make a report unbounded: 30,000 stray .dist-info members, 2,000 members 2,035
  folders deep, a provenance of 600,000 architectures.

Usage: robustness_check.py SAGEBUILD
"""
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import zipfile

from checklib import CPU_FACTOR, SANITIZED, check, finish

HEAD = """package: {{name: {name}, version: {{file: VERSION, regex: '^(.+)$'}}, source_dir: src}}
architectures: {{"8.0": ">=11.0"}}
default_archs: ["8.0"]
cuda: {{"13.0": {{version: "13.0.1"}}}}
platforms: {{linux: {{tag: {tag}, os: linux}}}}
"""


def children_cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(sagebuild, matrix, *args, timeout=30):
    """The result and the CPU seconds sagebuild used: CPU time, not wall time, so that the bounds
    below measure sagebuild's work and not how busy the machine is (ctest -j runs beside it)."""
    start = children_cpu_seconds()
    try:
        done = subprocess.run([sagebuild, "--matrix", matrix, *args], capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, timeout
    return done, children_cpu_seconds() - start


def cpu_bound(seconds):
    """A CPU bound written for the optimized build, for this sagebuild (checklib.CPU_FACTOR)."""
    return seconds * CPU_FACTOR


def run_measured(argv, preexec_fn, cwd, timeout=120):
    """Runs argv to its end (killed after `timeout` seconds); returns its result and its own peak
    RSS in MiB (os.wait4's usage of that one process, not of every child so far)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, stdout=out, stderr=err, preexec_fn=preexec_fn, cwd=cwd)
        killer = threading.Timer(timeout, proc.kill)
        killer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            killer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        done = subprocess.CompletedProcess(argv, proc.returncode, out.read(), err.read())
    return done, usage.ru_maxrss / 1024


def write(tmp, text, version="1.0\n"):
    path = os.path.join(tmp, "matrix.yaml")
    with open(path, "wb") as f:
        f.write(text.encode() if isinstance(text, str) else text)
    with open(os.path.join(tmp, "VERSION"), "w") as f:
        f.write(version)
    return path


def crashed(done):
    return done is None or done.returncode < 0 or done.returncode >= 128 or b"internal error" in done.stderr


def verify_measured(sagebuild, wheel, *flags):
    """verify-wheel's result and CPU seconds (run() measures children the same way)."""
    start = children_cpu_seconds()
    done = subprocess.run([sagebuild, "verify-wheel", "--threads", "1", *flags, wheel], capture_output=True,
                          timeout=300, cwd=os.path.dirname(wheel))
    return done, children_cpu_seconds() - start


def hostile_wheels(sagebuild, tmp):
    """Wheels built to make a report unbounded: a report lists at most 1,000 findings and counts
    the rest; names past 64 folders are refused before the per-folder checks; a provenance list
    of 600,000 architectures is one finding, not 600,000."""
    folder = os.path.join(tmp, "hostile-wheels")
    os.makedirs(folder)
    hoard = os.path.join(folder, "demo-1.0-py3-none-any.whl")
    with zipfile.ZipFile(hoard, "w", zipfile.ZIP_STORED) as z:
        for i in range(30_000):  # each a stray .dist-info directory and an unlisted file
            z.writestr(f"pkg{i}-1.0.dist-info/METADATA", b"Name: x\n")
    done, seconds = verify_measured(sagebuild, hoard, "--json")
    report = json.loads(done.stdout)[0] if done.stdout.startswith(b"[") else {}
    check(f"30,000 stray .dist-info members: 1,000 findings listed, the rest counted, "
          f"{len(done.stdout) / 1e6:.1f} MB of JSON, {seconds:.2f} CPU s (bound {cpu_bound(3)})",
          done.returncode == 5 and len(report.get("findings", [])) == 1000
          and report.get("findings_not_listed", 0) > 25_000 and len(done.stdout) < 16e6
          and seconds < cpu_bound(3) and all(len(f["message"]) < 1100 for f in report["findings"]),
          done.stderr[-300:].decode(errors="replace"))
    os.remove(hoard)
    deep = os.path.join(folder, "demo-1.0-py3-none-any.whl")
    with zipfile.ZipFile(deep, "w", zipfile.ZIP_STORED) as z:
        for i in range(2_000):
            z.writestr("demo/" + "d/" * 2_035 + f"f{i}.py", b"")
    done, seconds = verify_measured(sagebuild, deep)
    check(f"2,000 members 2,035 folders deep: A002, {seconds:.2f} CPU s (bound {cpu_bound(2)})",
          done.returncode == 5 and b"more than 64 folders deep" in done.stdout and seconds < cpu_bound(2),
          done.stdout[-300:].decode(errors="replace"))
    os.remove(deep)
    archs = os.path.join(folder, "demo-1.0-280.129-py3-none-any.whl")
    provenance = {"schema": 1, "sagebuild": "0.1.0", "package": "demo", "version": "1.0", "torch": "2.8.0",
                  "cuda": "12.9.1", "python": "3.12", "platform_tag": "any", "archs": ["9.0a"] * 600_000}
    with zipfile.ZipFile(archs, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("demo-1.0.dist-info/sagebuild.json", json.dumps(provenance))
    done, seconds = verify_measured(sagebuild, archs, "--json")
    report = json.loads(done.stdout)[0] if done.stdout.startswith(b"[") else {}
    check(f"a provenance of 600,000 architectures: one P001, {len(done.stdout) / 1e3:.0f} kB of JSON, "
          f"{seconds:.2f} CPU s (bound {cpu_bound(2)})",
          done.returncode == 5 and any("more than 64" in f["message"] for f in report.get("findings", []))
          and len(done.stdout) < 1e6 and seconds < cpu_bound(2), done.stdout[-300:].decode(errors="replace"))
    # summary of a 6 MB results file (parsing was quadratic: 17 s).
    big = os.path.join(folder, "big.json")
    with open(big, "w") as f:
        json.dump({"entry": "e", "status": "built", "phases": {f"p{i}": 1.0 for i in range(300_000)}}, f)
    start = children_cpu_seconds()
    done = subprocess.run([sagebuild, "summary", big], capture_output=True, cwd=folder,
                          env=dict(os.environ, GITHUB_STEP_SUMMARY=""), timeout=120)
    seconds = children_cpu_seconds() - start
    check(f"summary of a {os.path.getsize(big) / 1e6:.0f} MB results file: {seconds:.2f} CPU s "
          f"(bound {cpu_bound(1)})", done.returncode == 0 and seconds < cpu_bound(1),
          done.stderr[-300:].decode(errors="replace"))


def main():
    sagebuild = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        # A diamond: p0 <- (a1, b1) <- p1 <- (a2, b2) <- p2 ...
        profiles = ["  p0: {}"]
        for level in range(1, 25):
            profiles += [f"  a{level}: {{from: p{level - 1}}}", f"  b{level}: {{from: p{level - 1}}}",
                         f"  p{level}: {{from: [a{level}, b{level}]}}"]
        text = HEAD.format(name="demo", tag="linux_x86_64") + \
            'torch: {"2.11.0": {cuda: ["13.0"], python: ["3.12"]}}\nprofiles:\n' + "\n".join(profiles) + "\n"
        done, seconds = run(sagebuild, write(tmp, text), "validate")
        check(f"a 24-level diamond of profiles validates in under {cpu_bound(2)} CPU seconds ({seconds:.2f} s)",
              done is not None and done.returncode == 0 and seconds < cpu_bound(2), done and done.stderr.decode()[-300:])

        # As many profiles as the size limit allows, each 'from' the one before (was cubic: 2,000
        # took 10.8 s), and the 23-level diamond over 20,000 torch releases (was > 30 s).
        chain = ["  p0: {}"]
        text = HEAD.format(name="demo", tag="linux_x86_64") + \
            'torch: {"2.11.0": {cuda: ["13.0"], python: ["3.12"]}}\nprofiles:\n'
        while len(text) + sum(len(c) + 1 for c in chain) < 1_000_000:
            chain.append(f"  p{len(chain)}: {{from: p{len(chain) - 1}}}")
        done, seconds = run(sagebuild, write(tmp, text + "\n".join(chain) + "\n"), "validate")
        check(f"a chain of {len(chain):,} profiles, each from the one before, validates in under {cpu_bound(3)} CPU "
              f"seconds ({seconds:.2f} s)",
              done is not None and done.returncode == 0 and seconds < cpu_bound(3), done and done.stderr.decode()[-300:])

        # As many torch releases as the size limit (1 MiB) allows: each its own entry.
        torch = "".join(f'  "2.{minor}.{patch}": {{cuda: ["13.0"], python: ["3.12"]}}\n'
                        for minor in range(100, 200) for patch in range(100, 300))
        text = HEAD.format(name="demo", tag="linux_x86_64").replace(
            "source_dir: src", 'source_dir: src, entry_id: "{platform}-{torch_minor}-{torch_patch}"') + \
            "torch:\n" + torch + "profiles: {all: {}}\n"
        done, seconds = run(sagebuild, write(tmp, text), "validate", timeout=60)
        check(f"20,000 torch releases (a 1 MiB matrix.yaml) validate in under {cpu_bound(1)} CPU second(s) ({seconds:.2f} s)",
              done is not None and done.returncode == 0 and seconds < cpu_bound(1), done and done.stderr.decode()[-300:])
        diamond = text.replace("profiles: {all: {}}\n", "profiles:\n" + "\n".join(profiles) + "\n")
        done, seconds = run(sagebuild, write(tmp, diamond), "validate", timeout=120)
        check(f"20,000 torch releases under a 24-level diamond of profiles validate in under {cpu_bound(5)} CPU "
              f"seconds ({seconds:.2f} s)",
              done is not None and done.returncode == 0 and seconds < cpu_bound(5), done and done.stderr.decode()[-300:])

        done, seconds = run(sagebuild, "/dev/zero", "validate")
        check("--matrix /dev/zero is refused at once, with the size limit named",
              done is not None and done.returncode == 3 and b"larger than 1024 KiB" in done.stderr and seconds < cpu_bound(5),
              done and done.stderr.decode()[-300:])

        for field, text in (("package name", HEAD.format(name="a" * 199_999 + "-", tag="linux_x86_64")),
                            ("platform tag", HEAD.format(name="demo", tag="x" * 199_999 + "-"))):
            text += 'torch: {"2.11.0": {cuda: ["13.0"], python: ["3.12"]}}\nprofiles: {all: {}}\n'
            done, _ = run(sagebuild, write(tmp, text), "validate")
            check(f"a {field} of 200,000 characters is a located error, not a crash",
                  done is not None and done.returncode == 3 and not crashed(done) and b"matrix.yaml:" in done.stderr,
                  done and (str(done.returncode) + done.stderr.decode()[-300:]))
        text = HEAD.format(name="demo", tag="linux_x86_64") + \
            'torch: {"2.11.0": {cuda: ["13.0"], python: ["3.12"]}}\nprofiles: {all: {}}\n'
        done, _ = run(sagebuild, write(tmp, text, version="1" * 200_000 + "\n"), "validate")
        check("a 200,000-character version line is an error, not a crash",
              done is not None and done.returncode == 3 and not crashed(done) and b"no version found" in done.stderr,
              done and (str(done.returncode) + done.stderr.decode()[-300:]))

        text = (HEAD.format(name="demo", tag="linux_x86_64") +
                'torch: {"2.11.0": {cuda: ["13.0"], python: ["3.12"]}}\nprofiles: {all: {description: "caf\xe9"}}\n')
        done, _ = run(sagebuild, write(tmp, text.encode("latin-1")), "profiles", "--format", "json")
        ok = done is not None and done.returncode == 0
        try:
            ok = ok and json.loads(done.stdout)[0]["description"].startswith("caf")
        except ValueError:
            ok = False
        check("profiles --format json stays JSON with non-UTF-8 text in matrix.yaml", ok,
              done and done.stderr.decode(errors="replace")[-300:])

        wheel = os.path.join(tmp, "demo-1.0-py3-none-any.whl")
        with zipfile.ZipFile(wheel, "w") as z:
            info = zipfile.ZipInfo("demo/\udcff.py".encode("utf-8", "surrogateescape").decode("latin-1"))
            info.flag_bits &= ~0x800  # not flagged UTF-8: the name is raw bytes
            z.writestr(info, b"")
            z.writestr("demo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n")
        done = subprocess.run([sagebuild, "verify-wheel", "--json", wheel], capture_output=True, cwd=tmp)
        try:
            report = json.loads(done.stdout)
            ok = done.returncode == 5 and report[0]["wheel"] == os.path.basename(wheel)
        except ValueError:
            ok = False
        check("verify-wheel --json stays JSON with a non-UTF-8 entry name", ok,
              done.stdout[-300:].decode(errors="replace") + done.stderr[-300:].decode(errors="replace"))

        # Workflow commands and escape sequences in text from matrix.yaml and from a wheel reach
        # the output as text: no line a GitHub runner would act on.
        forged = ["::add-mask::x", "\u00a0::error::forged", "##[warning]x", "\x1b[2Jcleared"]
        text = (HEAD.format(name="demo", tag="linux_x86_64") +
                'torch: {"2.11.0": {cuda: ["13.0"], python: ["3.12"]}}\nprofiles:\n' +
                "".join(f"  p{i}: {{description: {json.dumps(f)}}}\n" for i, f in enumerate(forged)))
        listed, _ = run(sagebuild, write(tmp, text), "profiles")
        wheel = os.path.join(tmp, "demo-1.0-py3-none-any.whl")
        with zipfile.ZipFile(wheel, "w") as z:
            for f in forged:
                z.writestr(f"demo/{f}\n::warning::also.py", b"")
        verified = subprocess.run([sagebuild, "verify-wheel", wheel], capture_output=True, cwd=tmp)
        for label, done in (("profiles", listed), ("verify-wheel", verified)):
            out = (done.stdout + done.stderr).decode("utf-8", "replace") if done else ""
            commands = [line for line in out.splitlines()
                        if line.lstrip(" \t\u00a0").startswith("::") or "##[" in line or "\x1b" in line]
            check(f"{label}: forged workflow commands and escapes are printed as text",
                  done is not None and "x" in out and not commands, "\n".join(commands)[:300])
        # A user regex that backtracks without end, a version file outside the project, and
        # files that never end or block when opened (a FIFO).
        slow = HEAD.format(name="demo", tag="linux_x86_64").replace("'^(.+)$'", "'^(x+x+)+y()'") + \
            'torch: {"2.11.0": {cuda: ["13.0"], python: ["3.12"]}}\nprofiles: {all: {}}\n'
        done, seconds = run(sagebuild, write(tmp, slow, version="x" * 40 + "zy\n"), "validate")
        check(f"a backtracking package.version.regex stops at its budget ({seconds:.2f} CPU s)",
              done is not None and done.returncode == 3 and b"steps" in done.stderr and seconds < cpu_bound(5),
              done and done.stderr.decode()[-300:])
        outside = HEAD.format(name="demo", tag="linux_x86_64").replace("file: VERSION", "file: /etc/passwd") + \
            'torch: {"2.11.0": {cuda: ["13.0"], python: ["3.12"]}}\nprofiles: {all: {}}\n'
        done, _ = run(sagebuild, write(tmp, outside), "validate")
        check("package.version.file outside the project is a located error, and nothing of it is read",
              done is not None and done.returncode == 3 and b"outside the project" in done.stderr
              and b"root:" not in done.stderr + done.stdout, done and done.stderr.decode()[-300:])
        fifo = os.path.join(tmp, "fifo.yaml")
        os.mkfifo(fifo)
        done, _ = run(sagebuild, fifo, "validate")
        check("--matrix FIFO is refused at once (its open would block)",
              done is not None and done.returncode == 3 and b"pipe" in done.stderr, done and done.stderr.decode()[-300:])
        for args in (["summary", "/dev/zero"], ["release", "--tag", "v1", "--repo", "o/r", "--notes-file", "/dev/zero", wheel]):
            start = children_cpu_seconds()
            done = subprocess.run([sagebuild, *args], capture_output=True, timeout=30, cwd=tmp,
                                  env=dict(os.environ, GITHUB_TOKEN="t0ken-for-the-test", GITHUB_STEP_SUMMARY=""))
            seconds = children_cpu_seconds() - start
            check(f"{args[0]} reading /dev/zero stops at its bound ({seconds:.2f} CPU s)",
                  done.returncode != 0 and not crashed(done) and b"larger than" in done.stderr and seconds < cpu_bound(5),
                  done.stderr.decode()[-300:])

        # 2,000 .dist-info members of 1 MiB each in a 2 MB wheel (all were held as text: 2 GB),
        # verified under a 1 GiB address-space limit.
        with tempfile.TemporaryDirectory() as apart:  # no matrix.yaml above it
            big = os.path.join(apart, "demo-1.0-py3-none-any.whl")
            with zipfile.ZipFile(big, "w", zipfile.ZIP_DEFLATED) as z:
                for i in range(2000):
                    z.writestr(f"demo-1.0.dist-info/notes{i}.txt", bytes(1 << 20))
            if SANITIZED:  # the shadow's reservation alone is terabytes: the peak RSS instead
                limit, within = None, "1 GiB of memory"
            else:
                limit = lambda: resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
                within = "1 GiB of address space"
            done, peak_mib = run_measured([sagebuild, "verify-wheel", "--threads", "2", big],
                                          limit, apart)
        check(f"2,000 large .dist-info members are verified within {within} (peak RSS {peak_mib:.0f} MiB)",
              done.returncode == 5 and not crashed(done) and b"R001" in done.stdout
              and peak_mib < 1024,
              (done.stdout[-300:] + done.stderr[-300:]).decode(errors="replace"))

        with tempfile.TemporaryDirectory() as apart:  # no matrix.yaml above it
            hostile_wheels(sagebuild, apart)

        # summary reads results files: a 100,000-deep array (stack overflow in the serializer),
        # a size that is not a number (internal error), a message that closes its code block.
        results = {
            "deep": '{"entry": "e", "status": "built", "x": ' + "[" * 100_000 + "]" * 100_000 + "}",
            "size": json.dumps({"entry": "e", "status": "built", "size": "abc", "seconds": "x"}),
            "fence": json.dumps({"entry": "e", "status": "build_failed",
                                 "message": "a\n```\n## injected heading\n````"}),
        }
        for label, text in results.items():
            path = os.path.join(tmp, f"{label}.json")
            with open(path, "w") as f:
                f.write(text)
            done = subprocess.run([sagebuild, "summary", path], capture_output=True, cwd=tmp,
                                  env=dict(os.environ, GITHUB_STEP_SUMMARY=""))
            out = done.stdout.decode(errors="replace")
            fine = {"deep": done.returncode == 2 and b"not a results JSON object" in done.stderr,
                    "size": done.returncode == 0 and "1 wheel ready" in out,
                    "fence": done.returncode == 0 and "`````\n  a\n  ```\n  ## injected" in out}[label]
            check(f"summary of a results file with {label} trouble: an answer, not a crash",
                  fine and not crashed(done), (out + done.stderr.decode(errors="replace"))[-300:])
    return finish("robustness")


if __name__ == "__main__":
    sys.exit(main())
