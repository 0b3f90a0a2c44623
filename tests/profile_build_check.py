#!/usr/bin/env python3
"""sagebuild build --profile/--entry end to end, on a copy of this repository's kernels and
package with a test matrix (one architecture and one head dim, SAGEATTN_HEAD_DIMS, so that the
kernels compile in seconds; the other head dims' launchers compile without their kernels):

- a real build: the kernels are compiled into the kernel cache, the wheel links them, is
  verified (import test included) and lands in dist/; the results file records each phase;
  ccache on PATH launches nvcc and the C++ compilers (a recording wrapper around the real one,
  whose cache, kept in the test's directory, serves the --no-cache build's compiles)
- a second run is "up to date" and builds nothing; --no-cache compiles the kernels again
- two runs of two checkouts sharing one cache each compile their own kernels (the key holds the
  checkout's path)
- a missing Python, a missing CUDA toolkit, a wrong nvcc version and a failing compiler each
  end with a clear message, exit code 4 and nothing in dist/
- --backend docker with a fake docker client: the Bake file, the exact command, the wheel
  verified on the host and moved into dist/, a failing bake
- Ctrl-C (SIGINT) in each phase (toolchain, environment, kernels, wheel, verify), and SIGTERM in
  two, end with exit code 130, a message naming the signal and the phase, no process left
  running, nothing in dist/, no half-made cache entry
- SIGKILL, a dist/ that cannot be written or is full, and a crashing build command leave no
  partial wheel, and the next run completes; two runs of one entry at once take turns

Usage: profile_build_check.py SAGEBUILD REPO TORCH_PYTHON [--shared-cache]
TORCH_PYTHON: an interpreter with torch 2.11 (CUDA 13), used as an existing environment.
--shared-cache: only the two checkouts sharing one cache (two kernel compiles of their own, in a
test of its own, so that ctest runs it beside the rest).
"""
import glob
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

from checklib import check, fake_toolkit, finish, write_script

MATRIX = """\
schema: 1
package:
  name: sageattention
  version: {{file: python/pyproject.toml, regex: '^version\\s*=\\s*"([^"]+)"'}}
  source_dir: python
  build_command: {build_command}
  build_environment: {{SAGEATTENTION_TORCH_REQUIREMENT: "{{torch_requirement}}", SAGEATTENTION_TORCH_ABI: "{{abi}}"}}
  kernels:
    sources: [CMakeLists.txt, kernels/CMakeLists.txt, "kernels/cmake/**", "kernels/include/**", "kernels/src/**"]
    exclude: ["**/*_test.cpp"]
    cmake: {{SAGEBUILD_BUILD_TOOL: "OFF", SAGEATTN_INSTALL_KERNELS: "ON", SAGEATTN_CUDART: none, SAGEATTN_ARCH_LIST: "{{archs}}", SAGEATTN_HEAD_DIMS: "64"}}
    handoff: SAGEATTN_KERNELS_PREBUILT
  binding:
    sources: [CMakeLists.txt, python/CMakeLists.txt, "python/csrc/**"]
    cmake: {{SAGEBUILD_BUILD_TOOL: "OFF", SAGEATTN_BUILD_BINDING: "ON"}}
    library: sageattention/_kernels.so
    handoff: SAGEATTN_BINDING_PREBUILT
architectures: {{"8.0": ">=11.0"}}
default_archs: ["8.0"]
cuda:
  "12.6": {{version: "12.6.1"}}
  "13.0": {{version: "13.0.1"}}
torch:
  "2.11.0": {{cuda: ["12.6", "13.0"], python: ["3.8", "3.12"]}}
platforms: {{linux: {{tag: linux_x86_64, os: linux, docker: linux/amd64}}}}
docker:
  default: hub
  images: {{hub: [{{cuda: "*", base: "nvidia/cuda:{{cuda_full}}-devel-ubuntu24.04", toolkit: image, python: uv}}]}}
profiles:
  all: {{description: every entry}}
{toolchains}
"""
PIP_WHEEL = ('["{python}", "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", '
             '"--wheel-dir", "{wheel_dir}", "{source_dir}"]')
ENTRY = "linux-pytorch211-cu130-python312"
# A marker in the command lines of the slow fakes, to find any left running after Ctrl-C; with
# this run's pid, so that two runs of this test at once never count (or kill) each other's.
MARKER = f"sagebuild-interrupt-probe-{os.getpid()}"
# The fakes sleep in this interpreter, named by its full path (not whatever `python3` is on PATH).
SLEEP = f'exec {sys.executable} -c "import time; time.sleep(600)" {MARKER}'


class Project:
    def __init__(self, repo, tmp):
        self.root = os.path.join(tmp, "project")
        for item in ["CMakeLists.txt", "kernels/CMakeLists.txt", "kernels/include", "kernels/src",
                     "kernels/cmake", "python"]:
            src, dst = os.path.join(repo, item), os.path.join(self.root, item)
            if os.path.isdir(src):
                shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "build",
                                                                        "dist", "*.so"))
            else:
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copy(src, dst)
        self.cache = os.path.join(tmp, "cache")
        self.dist = os.path.join(self.root, "dist")

    def configure(self, build_command=PIP_WHEEL, toolchains=""):
        with open(os.path.join(self.root, "matrix.yaml"), "w") as f:
            f.write(MATRIX.format(build_command=build_command, toolchains=toolchains))

    def argv(self, sagebuild, *args):
        return [sagebuild, "--matrix", os.path.join(self.root, "matrix.yaml"), "build",
                "--cache-dir", self.cache, *args]

    def dist_files(self):
        return sorted(os.listdir(self.dist)) if os.path.isdir(self.dist) else []

    def leftovers(self):
        """Half-made cache entries: staging directories that outlived their run."""
        return glob.glob(os.path.join(self.cache, "**", "*.tmp-*"), recursive=True)

    def results(self, entry=ENTRY):
        with open(os.path.join(self.root, "build", "results", entry + ".json")) as f:
            return json.load(f)


def run(argv, env=None, timeout=900):
    start = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout)
    return done, time.monotonic() - start


def clean_env(**extra):
    env = dict(os.environ)
    for var in ["CUDA_HOME", "CUDA_PATH", "TORCH_CUDA_ARCH_LIST", "SKBUILD_CMAKE_DEFINE",
                "GITHUB_ACTIONS"]:
        env.pop(var, None)
    env.update(extra)
    return env


def interrupt_in_phase(project, argv, phase, env, sig=signal.SIGINT):
    """Starts the build, sends `sig` once the entry reports `phase` (plus a moment, so that the
    phase's work is under way), and returns (exit code, output)."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env)
    output = []
    deadline = time.monotonic() + 300
    for line in proc.stdout:
        output.append(line)
        if line.startswith(f"[{ENTRY}] {phase} ("):
            time.sleep(1.5)
            proc.send_signal(sig)
            break
        if time.monotonic() > deadline:
            break
    try:
        rest, _ = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        rest, _ = proc.communicate()
    output.append(rest)
    return proc.returncode, "".join(output)


def shared_cache(sagebuild, repo, tmp, torch_python):
    """Two sagebuild runs of two checkouts sharing one cache at the same moment: each compiles its
    own kernels and binding, since nvcc names symbols after the sources' absolute paths and the
    keys hold the checkout's path (a cache entry from another checkout would give other bytes);
    both succeed and leave no staging folder. (Two fills of one entry at once, one waiting for
    the other, are cache_inventory_test's.)"""
    cache = os.path.join(tmp, "shared-cache")
    runs = []
    for name in ("checkout-a", "checkout-b"):
        other = Project(repo, os.path.join(tmp, name))
        other.cache = cache
        other.configure()
        runs.append((other, subprocess.Popen(
            other.argv(sagebuild, "--entry", ENTRY, "--python-env", torch_python),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=clean_env())))
    outputs = [(p, proc.communicate(timeout=900)[0], proc.returncode) for p, proc in runs]
    text = "".join(out for _, out, _ in outputs)
    keys = sorted(os.listdir(os.path.join(cache, "kernels"))) if os.path.isdir(
        os.path.join(cache, "kernels")) else []
    check("two checkouts sharing a cache each compile their own kernels (the key holds the path)",
          all(code == 0 and p.dist_files() for p, _, code in outputs)
          and text.count("kernel cache miss") == 2 and "kernel cache hit" not in text
          and len([k for k in keys if not k.endswith(".lock")]) == 2
          and text.count("binding cache miss") == 2
          and not glob.glob(os.path.join(cache, "**", "*.tmp-*"), recursive=True),
          f"{keys}\n{text[-4000:]}")


FAKE_DOCKER = """#!/usr/bin/env python3
# Stands in for the docker client (this machine has no engine): records its arguments, and for
# `buildx bake` exports each target's wheel (by its image title label) from $FAKE_DOCKER_WHEELS
# into the target's local output, like the real exporter would.
import json, os, shutil, sys
args = sys.argv[1:]
with open(os.environ["FAKE_DOCKER_LOG"], "a") as log:
    log.write(json.dumps(args) + "\\n")
# The preflight's questions (an engine answers, buildx is there).
if args[:1] == ["version"] or args[:2] == ["buildx", "version"]:
    print("27.0.0" if args[0] == "version" else "github.com/docker/buildx v0.13.1")
    sys.exit(0)
if args[:2] != ["buildx", "bake"]:
    sys.exit(2)
targets, i = [], 2
while i < len(args):
    if args[i] in ("--file", "--progress", "--set"):
        i += 2
        continue
    targets.append(args[i])
    i += 1
bake = json.load(open(args[args.index("--file") + 1]))
for name in targets:
    target = bake["target"][name]
    dest = target["output"][0].split("dest=", 1)[1]
    wheel = os.path.join(os.environ.get("FAKE_DOCKER_WHEELS", "/nonexistent"),
                         target["labels"]["org.opencontainers.image.title"])
    if os.path.exists(wheel):
        os.makedirs(dest, exist_ok=True)
        shutil.copy(wheel, dest)
print("#1 [internal] load build definition from Dockerfile.linux")
sys.exit(int(os.environ.get("FAKE_DOCKER_EXIT", "0")))
"""


def docker_backend(sagebuild, project, tmp, wheels, wheel):
    """--backend docker against a fake docker client: the generated Bake file, the exact
    command, the host-side verification and move into dist/, and a failing bake."""
    project.configure()
    bin_dir = os.path.join(tmp, "fake-docker")
    os.makedirs(bin_dir)
    with open(os.path.join(bin_dir, "docker"), "w") as f:
        f.write(FAKE_DOCKER.replace("#!/usr/bin/env python3", "#!" + sys.executable, 1))
    os.chmod(os.path.join(bin_dir, "docker"), stat.S_IRWXU)
    log = os.path.join(tmp, "docker-argv.log")
    env = clean_env(PATH=bin_dir + os.pathsep + os.environ["PATH"], FAKE_DOCKER_LOG=log,
                    FAKE_DOCKER_WHEELS=wheels)
    done, _ = run(project.argv(sagebuild, "--entry", ENTRY, "--backend", "docker"), env)
    bake_file = os.path.join(project.root, "build", "sagebuild", "docker-bake.json")
    argv = [json.loads(line) for line in open(log)] if os.path.exists(log) else []
    argv = [a for a in argv if a[:2] == ["buildx", "bake"]]
    check("--backend docker runs `docker buildx bake` on the generated file, then verifies and "
          "moves the exported wheel into dist/",
          done.returncode == 0 and project.dist_files() == [wheel]
          and argv == [["buildx", "bake", "--file", bake_file, "--progress", "plain", ENTRY]]
          and project.results()["status"] == "built"
          and list(project.results()["phases"]) == ["docker", "verify"],
          f"argv {argv}\n{done.stdout[-2500:]}{done.stderr}")
    bake = json.load(open(bake_file))
    target = bake["target"][ENTRY]
    check("the Bake target builds the entry with sagebuild inside and exports per entry",
          target["args"]["SAGEBUILD_ENTRY"] == ENTRY
          and target["args"]["BASE_IMAGE"] == "nvidia/cuda:13.0.1-devel-ubuntu24.04"
          and target["output"] == ["type=local,dest=" + os.path.join(
              project.root, "build", "sagebuild", "docker-out", ENTRY)]
          and target["dockerfile"] == "docker/Dockerfile.linux", json.dumps(target, indent=1))
    shutil.rmtree(project.dist)
    failed, _ = run(project.argv(sagebuild, "--entry", ENTRY, "--backend", "docker"),
                    dict(env, FAKE_DOCKER_EXIT="1", FAKE_DOCKER_WHEELS=os.path.join(tmp, "none")))
    check("a failing bake: exit 4, its log named with its last lines, dist/ empty",
          failed.returncode == 4 and "docker buildx bake failed (exit code 1); log: " in failed.stdout
          and "load build definition" in failed.stdout and not project.dist_files(),
          failed.stdout[-2000:] + failed.stderr)
    no_client, _ = run(project.argv(sagebuild, "--entry", ENTRY, "--backend", "docker"),
                       dict(env, PATH="/nonexistent"))
    no_engine, _ = run(project.argv(sagebuild, "--entry", ENTRY, "--backend", "docker"),
                       dict(env, PATH=os.environ["PATH"], DOCKER_HOST="unix:///nonexistent.sock"))
    check("no docker client, or no engine: exit 4 before any bake, each with its fix",
          no_client.returncode == 4 and "no docker client on PATH" in no_client.stdout
          and "scripts/docker-engine.sh" in no_client.stdout
          and (no_engine.returncode == 4 and "no Docker engine answers" in no_engine.stdout
               or shutil.which("docker") is None)
          and not project.dist_files(),
          no_client.stdout[-1500:] + no_engine.stdout[-1500:])
    dry, _ = run(project.argv(sagebuild, "--entry", ENTRY, "--backend", "docker", "--dry-run",
                              "--torch-index-url", "https://user:t0ken@example.invalid/whl/cu130"),
                 env)
    check("--dry-run --backend docker prints the exact command, with credentials masked",
          dry.returncode == 0 and f"docker buildx bake --file {bake_file} --progress plain --set "
          "'*.args.TORCH_INDEX_URL=https://user:***@example.invalid/whl/cu130' " + ENTRY in dry.stdout
          and "t0ken" not in dry.stdout, dry.stdout + dry.stderr)


def faults(sagebuild, project, env, torch_python):
    """What else stops a build half-way: SIGKILL (nothing can be cleaned up), a dist/ that
    cannot be written, a compiler that crashes. Each leaves dist/ without a partial wheel and the
    cache usable: the next run completes."""
    args = ["--entry", ENTRY, "--python-env", torch_python, "--force"]
    # SIGKILL in the wheel phase: no handler runs; the next run must still build and deliver.
    project.configure(build_command=f'["{{python}}", "-c", "import time; time.sleep(600)  # {MARKER}"]')
    proc = subprocess.Popen(project.argv(sagebuild, *args), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env)
    for line in proc.stdout:
        if line.startswith(f"[{ENTRY}] wheel ("):
            time.sleep(1.5)
            proc.kill()
            break
    proc.communicate()
    for pid in stray_processes():  # its build command outlives it: nothing was there to stop it
        os.kill(int(pid), signal.SIGKILL)
    killed_dist = project.dist_files()
    project.configure()
    again, _ = run(project.argv(sagebuild, *args), env)
    check("SIGKILL during the wheel phase leaves dist/ empty, and the next run builds and delivers",
          not killed_dist and again.returncode == 0 and project.dist_files()
          and not project.leftovers(),
          f"after the kill: {killed_dist}; next run: exit {again.returncode}\n{again.stderr[-1500:]}")
    delivered = project.dist_files()
    # A dist/ that cannot be written: a clear failure naming it, the wheel already there
    # untouched. Root writes through file modes, so there the dist/ is one that cannot exist
    # (under a regular file) instead of a read-only one.
    before = {n: os.path.getmtime(os.path.join(project.dist, n)) for n in delivered}
    if os.geteuid() == 0:
        blocker = os.path.join(project.root, "not-a-directory")
        open(blocker, "w").close()
        target = os.path.join(blocker, "dist")
        unwritable, _ = run(project.argv(sagebuild, *args, "--dist", target), env)
        what = "a dist/ that cannot be made (under a regular file)"
    else:
        target = project.dist
        os.chmod(project.dist, 0o555)
        try:
            unwritable, _ = run(project.argv(sagebuild, *args), env)
        finally:
            os.chmod(project.dist, 0o755)
        what = "a read-only dist/"
    after = {n: os.path.getmtime(os.path.join(project.dist, n)) for n in project.dist_files()}
    check(f"{what}: exit 4 naming it, the wheels already delivered untouched, nothing partial",
          unwritable.returncode == 4 and target in unwritable.stdout + unwritable.stderr
          and before == after
          and not glob.glob(os.path.join(project.root, "**", ".*.tmp-*"), recursive=True),
          f"exit {unwritable.returncode}; dist {before} -> {after}\n{unwritable.stderr[-1500:]}")
    # Two runs of one checkout building the same entry at once: the second waits for the first
    # (they would share the entry's work directory), both succeed, dist/ holds one good wheel.
    project.configure()
    procs = [subprocess.Popen(project.argv(sagebuild, *args), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, env=env) for _ in range(2)]
    outputs = [proc.communicate(timeout=600)[0] for proc in procs]
    codes = [proc.returncode for proc in procs]
    wheels = project.dist_files()
    verified = subprocess.run([sagebuild, "--matrix", os.path.join(project.root, "matrix.yaml"),
                               "verify-wheel", os.path.join(project.dist, wheels[0])],
                              capture_output=True, text=True) if len(wheels) == 1 else None
    check("two runs building the same entry at once: one waits for the other, both succeed, "
          "one verified wheel in dist/",
          codes == [0, 0] and any("waiting for another sagebuild run" in o for o in outputs)
          and verified is not None and verified.returncode == 0,
          f"exit {codes}; dist {wheels}\n{outputs[0][-800:]}\n{outputs[1][-800:]}")
    # A full disk where dist/ is: the copy into it fails; a clear failure, nothing left there.
    tiny = os.path.join(project.root, "tiny-dist")
    os.makedirs(tiny)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4k", "tmpfs", tiny],
                             capture_output=True).returncode == 0
    if mounted:
        try:
            full, _ = run(project.argv(sagebuild, *args, "--dist", tiny), env)
            left = os.listdir(tiny)
        finally:
            subprocess.run(["umount", tiny])
        check("a full disk under dist/: exit 4 naming dist/ and the cause, nothing left there",
              full.returncode == 4 and tiny in full.stdout + full.stderr
              and "No space left" in full.stdout + full.stderr and not left,
              f"exit {full.returncode}; left {left}\n{full.stdout[-800:]}{full.stderr[-800:]}")
    else:
        print("skip a full disk under dist/: this machine does not let the test mount a small tmpfs")
    # A compiler (here the whole build command) that crashes.
    shutil.rmtree(project.dist)
    project.configure(build_command='["{python}", "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"]')
    crashed, _ = run(project.argv(sagebuild, *args), env)
    check("a build command that crashes (SIGSEGV): exit 4, the signal named, dist/ empty",
          crashed.returncode == 4 and "SIGSEGV" in crashed.stderr + crashed.stdout
          and not project.dist_files(),
          f"exit {crashed.returncode}\n{crashed.stderr[-1500:]}")


def stray_processes():
    done = subprocess.run(["pgrep", "-f", MARKER], capture_output=True, text=True)
    return done.stdout.split()


def recording_launcher(tmp):
    """A `ccache` first on PATH for every run of this test: it writes the compiler it launches
    to a log, then runs the real ccache (its cache in `tmp`: the --no-cache build of the project
    takes the first build's objects from it), or the compiler itself where this machine has no
    ccache. Returns the log's path."""
    real = shutil.which("ccache") or ""
    log = os.path.join(tmp, "launcher.log")
    bin_dir = os.path.join(tmp, "launcher-bin")
    write_script(os.path.join(bin_dir, "ccache"),
                 f'echo "$1" >> "{log}"\n'
                 f'if [ -n "{real}" ]; then exec "{real}" "$@"; fi\nexec "$@"')
    os.environ["PATH"] = bin_dir + os.pathsep + os.environ["PATH"]
    os.environ["CCACHE_DIR"] = os.path.join(tmp, "ccache")
    return log


def main():
    sagebuild, repo, torch_python = (os.path.abspath(a) for a in sys.argv[1:4])
    tmp = tempfile.mkdtemp(prefix="sagebuild-profile-")
    try:
        if sys.argv[4:] == ["--shared-cache"]:
            recording_launcher(tmp)
            shared_cache(sagebuild, repo, tmp, torch_python)
            return finish("profile build, shared cache")
        project = Project(repo, tmp)
        launcher_log = recording_launcher(tmp)
        env = clean_env()

        # --- a real build, then nothing to do, then --no-cache ---------------------------------
        project.configure()
        done, seconds = run(project.argv(sagebuild, "--entry", ENTRY, "--python-env", torch_python),
                            env)
        wheel = f"sageattention-2.2.0-2110.130-cp312-cp312-linux_x86_64.whl"
        check("a real entry builds into dist/ through the kernel cache",
              done.returncode == 0 and project.dist_files() == [wheel]
              and "kernel cache miss: compiling cuda13.0-" in done.stdout,
              done.stdout[-3000:] + done.stderr)
        if done.returncode != 0:
            return finish("profile build")
        record = project.results()
        check("the results file records the wheel, its digest and every phase",
              record["status"] == "built" and record["wheel"] == wheel
              and len(record["sha256"]) == 64
              and list(record["phases"]) == ["toolchain", "environment", "kernels", "binding", "wheel",
                                            "verify"],
              json.dumps(record, indent=1))
        check("the entry's log holds the build and the verification report",
              "import test passed" in open(record["log"]).read())
        launched = open(launcher_log).read().split() if os.path.exists(launcher_log) else []
        check("ccache on PATH launches the kernels' nvcc and C++ compiler, and the binding's",
              any(c.endswith("/nvcc") for c in launched)
              and len({c for c in launched if not c.endswith("/nvcc")}) >= 1,
              " ".join(sorted(set(launched))) or "ccache was not run")
        # A result an earlier, unrelated run left behind is not part of this run's summary.
        stale = os.path.join(project.root, "build", "results", "linux-stale-entry.json")
        with open(stale, "w") as f:
            json.dump({"entry": "linux-stale-entry", "status": "build_failed", "message": "old"}, f)
        summary = subprocess.run([sagebuild, "--matrix", os.path.join(project.root, "matrix.yaml"), "summary"],
                                 capture_output=True, text=True, env=clean_env(GITHUB_STEP_SUMMARY=""))
        check("summary reports the latest build's entries, not stale results",
              summary.returncode == 0 and "1 wheel ready, 0 failed" in summary.stdout
              and wheel in summary.stdout and "linux-stale-entry" not in summary.stdout,
              summary.stdout[-1500:] + summary.stderr)
        print(f"     first build: {seconds:.1f} s")

        again, again_seconds = run(project.argv(sagebuild, "--entry", ENTRY, "--python-env",
                                                torch_python), env)
        # What was done, not how long it took (a busy machine is slow): up to date, and the
        # record and log of the real build kept (checked below).
        check("a second run with nothing changed is up to date and builds nothing",
              again.returncode == 0 and "up_to_date" in again.stdout, again.stdout + again.stderr)
        check("the no-op run keeps the last real build's record and log",
              project.results() == record and "import test passed" in open(record["log"]).read(),
              json.dumps(project.results(), indent=1))
        print(f"     second run: {again_seconds:.2f} s")
        quiet, _ = run(project.argv(sagebuild, "--entry", ENTRY, "--python-env", torch_python,
                                    "--quiet"), env)
        check("--quiet: a build with nothing to report prints nothing",
              quiet.returncode == 0 and quiet.stdout == "" and quiet.stderr == "",
              quiet.stdout + quiet.stderr)

        forced, _ = run(project.argv(sagebuild, "--entry", ENTRY, "--python-env", torch_python,
                                     "--force", "--verbose"), env)
        check("--force rebuilds, taking the kernels from the cache",
              forced.returncode == 0 and "kernel cache hit: cuda13.0-" in forced.stdout,
              forced.stdout[-2000:])
        commands = [l for l in forced.stdout.splitlines() if l.startswith(f"[{ENTRY}] sagebuild: $ ")]
        check("--verbose shows each command the build runs, and its output, under the entry",
              any(" -m pip wheel --no-deps" in c for c in commands)
              and f"[{ENTRY}] Successfully built sageattention" in forced.stdout,
              "\n".join(commands) or forced.stdout[-2000:])
        check("the entry's log names each command it ran",
              " -m pip wheel --no-deps" in open(project.results()["log"]).read())
        naive, _ = run(project.argv(sagebuild, "--entry", ENTRY, "--python-env", torch_python,
                                    "--force", "--no-cache"), env)
        check("--no-cache compiles the kernels for the entry itself",
              naive.returncode == 0 and "(cuda13.0-" in naive.stdout and "no cache" in naive.stdout,
              naive.stdout[-2000:])
        dry, _ = run(project.argv(sagebuild, "--profile", "all", "--dry-run", "--python-env",
                                  torch_python), env)
        check("--dry-run prints each entry's toolchain and exact command, builds nothing",
              f"{ENTRY}\n" in dry.stdout
              and "SKBUILD_CMAKE_DEFINE=SAGEATTN_KERNELS_PREBUILT=" in dry.stdout
              and "-m pip wheel --no-deps" in dry.stdout
              and "no CUDA 12.6 toolkit" in dry.stdout, dry.stdout[-3000:])
        check("--dry-run ends with what can build here and fails as the build would (exit 4)",
              dry.returncode == 4 and "entries can build here; 2 cannot:\n" in dry.stdout
              and "  linux-pytorch211-cu126-python312: no CUDA 12.6 toolkit\n" in dry.stdout
              and "--skip-unavailable builds the others" in dry.stderr,
              dry.stdout[-600:] + dry.stderr)
        lenient, _ = run(project.argv(sagebuild, "--profile", "all", "--dry-run", "--python-env",
                                      torch_python, "--skip-unavailable"), env)
        check("--dry-run --skip-unavailable plans the others and succeeds",
              lenient.returncode == 0, lenient.stdout[-600:] + lenient.stderr)

        wheels = os.path.join(tmp, "wheels")
        os.makedirs(wheels)
        shutil.copy(os.path.join(project.dist, wheel), wheels)
        shutil.rmtree(project.dist)
        docker_backend(sagebuild, project, tmp, wheels, wheel)

        # --- failures: a clear message, exit 4, nothing in dist/ ------------------------------
        def failure(name, args, want, extra_env=None, toolchains=""):
            project.configure(toolchains=toolchains)
            done, _ = run(project.argv(sagebuild, *args), clean_env(**(extra_env or {})))
            text = done.stdout + done.stderr
            check(f"{name}: exit 4, '{want}', dist/ empty",
                  done.returncode == 4 and want in text and not project.dist_files(), text[-2500:])

        failure("a missing Python", ["--entry", "linux-pytorch211-cu130-python38"],
                "no Python 3.8 here: looked in matrix.yaml toolchains.python, pyenv",
                {"PYENV_ROOT": os.path.join(tmp, "no-pyenv"), "PATH": "/usr/bin:/bin"})
        failure("a configured Python that is not there", ["--entry", ENTRY],
                "toolchains.python '3.12' is /nonexistent/python3.12, which does not run",
                toolchains='toolchains: {python: {"3.12": /nonexistent/python3.12}}')
        failure("a missing CUDA toolkit",
                ["--entry", "linux-pytorch211-cu126-python312", "--python-env", torch_python],
                "no CUDA 12.6 toolkit: ")
        wrong = fake_toolkit(os.path.join(tmp, "cuda-12.4"), "12.4.131", "exit 1")
        failure("a wrong nvcc version",
                ["--entry", "linux-pytorch211-cu126-python312", "--python-env", torch_python,
                 "--cuda-path", f"12.6={wrong}"],
                "but its nvcc is 12.4.131: wrong nvcc version")
        broken = fake_toolkit(os.path.join(tmp, "cuda-broken"), "13.0.88",
                              'echo "nvcc fatal: the compiler says no" >&2; exit 1')
        failure("a failing compiler",
                ["--entry", ENTRY, "--python-env", torch_python, "--force",
                 "--cuda-path", f"13.0={broken}"],
                "configuring the kernels failed (exit code 1); from ")
        failure("a failing compiler: CMake's own error is quoted",
                ["--entry", ENTRY, "--python-env", torch_python, "--force",
                 "--cuda-path", f"13.0={broken}"],
                "CMake Error at ")
        check("a failing compiler leaves no kernel cache entry behind", not project.leftovers(),
              str(project.leftovers()))
        source = os.path.join(project.root, "kernels", "src", "quantize", "quantize.cu")
        original = open(source).read()
        with open(source, "a") as f:
            f.write('\n#error "broken on purpose by the test"\n')
        try:
            failure("a kernel that does not compile: nvcc's error is quoted",
                    ["--entry", ENTRY, "--python-env", torch_python, "--force"],
                    "broken on purpose by the test")
        finally:
            with open(source, "w") as f:
                f.write(original)

        # --- Ctrl-C in each phase --------------------------------------------------------------
        # The interpreter the torch environment was made from (not a pyenv shim, which runs
        # only the active version).
        real_python = subprocess.check_output(
            [torch_python, "-c", "import os, sys; print(os.path.realpath(sys._base_executable))"],
            text=True).strip()
        # Sleeps when asked to make a venv (the environment phase without --python-env, and the
        # import test of the verify phase), else is the interpreter it wraps.
        def slow_venv_python(name, target):
            return write_script(os.path.join(tmp, name, "python3.12"),
                                f'if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then\n'
                                f"  {SLEEP}\nfi\nexec {target} \"$@\"")
        slow_base = slow_venv_python("slow-base", real_python)
        slow_env = slow_venv_python("slow-env", torch_python)
        slow_nvcc_version = write_script(os.path.join(tmp, "cuda-slow-version", "bin", "nvcc"),
                                         SLEEP)
        slow_compiler = fake_toolkit(os.path.join(tmp, "cuda-slow"), "13.0.88",
                                     SLEEP)
        cases = [
            ("environment", ["--entry", ENTRY], PIP_WHEEL,
             f'toolchains: {{python: {{"3.12": {slow_base}}}}}'),
            ("toolchain", ["--entry", ENTRY, "--python-env", torch_python, "--cuda-path",
                         f"13.0={os.path.dirname(os.path.dirname(slow_nvcc_version))}"],
             PIP_WHEEL, ""),
            ("kernels", ["--entry", ENTRY, "--python-env", torch_python, "--no-cache",
                         "--cuda-path", f"13.0={slow_compiler}"], PIP_WHEEL, ""),
            ("wheel", ["--entry", ENTRY, "--python-env", torch_python, "--force"],
             f'["{{python}}", "-c", "import time; time.sleep(600)  # {MARKER}"]', ""),
            ("verify", ["--entry", ENTRY, "--python-env", slow_env, "--force"], PIP_WHEEL, ""),
        ]
        # SIGTERM (what CI runners and process managers send) in the two phases a user sees
        # most; the others are the same code path.
        signals = [(c, signal.SIGINT, "Ctrl-C (SIGINT)") for c in cases]
        signals += [(c, signal.SIGTERM, "SIGTERM") for c in cases if c[0] in ("wheel", "verify")]
        for (phase, args, build_command, toolchains), sig, cause in signals:
            project.configure(build_command=build_command, toolchains=toolchains)
            start = time.monotonic()
            code, output = interrupt_in_phase(project, project.argv(sagebuild, *args), phase, env,
                                              sig)
            seconds = time.monotonic() - start
            time.sleep(0.5)
            strays = stray_processes()
            record = project.results()
            said = f"interrupted by {cause} during the {phase} phase"
            check(f"{cause} during {phase}: exit 130 in {seconds:.0f} s, '{said}', no process "
                  "left, dist/ empty, no half-made cache entry, recorded as interrupted",
                  code == 130 and said in output and not strays
                  and not project.dist_files() and not project.leftovers()
                  and record["status"] == "interrupted" and said in record["message"],
                  f"exit {code}; strays {strays}; dist {project.dist_files()}; "
                  f"leftovers {project.leftovers()}; status {record['status']}\n{output[-2500:]}")
            for pid in strays:
                os.kill(int(pid), signal.SIGKILL)
        faults(sagebuild, project, env, torch_python)
        return finish("profile build")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
