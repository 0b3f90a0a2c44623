"""`sagebuild build --backend docker` and `doctor --backend docker` against the real Docker engine
that scripts/docker-engine.sh starts, with its busybox image (sagebuild-base:tiny) standing in for
a build image: what fits the test command's time (a real wheel build in containers takes the best
part of an hour: scripts/test-docker.sh). A project in a temp dir whose docker/Dockerfile.linux
declares the generated Bake file's arguments, records them and the secrets (the CA bundle, ccache's
remote storage), and exports a wheel and a build record from its context; then:
- the Bake file sagebuild generates runs on the engine: the target's arguments and the secrets
  reach the build (the remote's URL, password included, written into no file and no output), the
  exported wheel is collected from its own folder and verified on the host, the build record's
  compile cache figures are reported, and a wheel that fails verification stays out of dist/;
- doctor and the build's preflight name an image the engine lacks, or a client without buildx,
  with the command that makes it, and bake nothing;
- a full disk where the wheel is exported: the bake's error shown, nothing in dist/;
- Ctrl-C during the bake: exit 130, the build's process inside the engine gone within seconds,
  no container left, dist/ untouched; the next run completes;
- scripts/docker-engine.sh status tells an engine that is not running from a missing image.
Usage: docker_engine_check.py SAGEBUILD. Exits 77 (skipped) when no engine answers."""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from checklib import check, fake_wheel, finish

ENTRY = "linux-pytorch211-cu130-python312"
SLEEP_MARK = "613"
REMOTE_PASSWORD = "pw-7c41e9"  # in the remote's URL: must appear in no file and no output  # the seconds the slow build sleeps: how its process is found in /proc

MATRIX = """\
package:
  name: sageattention
  version: {file: VERSION, regex: '^(.+)$'}
  source_dir: src
architectures: {"9.0a": ">=12.0"}
default_archs: ["9.0a"]
cuda: {"13.0": {version: "13.0.1"}}
torch:
  "2.11.0": {cuda: ["13.0"], python: ["3.12"]}
platforms: {linux: {tag: linux_x86_64, os: linux, docker: linux/amd64}}
docker:
  default: smoke
  images:
    smoke:
      - {cuda: "13.*", base: "sagebuild-base:tiny", toolkit: image, system_python: "3.12"}
    missing:
      - {cuda: "*", base: "sagebuild-base:debian99", toolkit: image, system_python: "3.12"}
profiles: {all: {}}
"""

# The arguments of docker/Dockerfile.linux, recorded; the wheel (and a sleep) from the context.
DOCKERFILE = """\
ARG BASE_IMAGE=sagebuild-base:tiny
ARG PYTHON_IMAGE=scratch
FROM ${PYTHON_IMAGE} AS python
FROM ${BASE_IMAGE} AS build
ARG CUDA_SOURCE
ARG PYTHON_SOURCE
ARG PYTHON_VERSION
ARG SAGEBUILD_ENTRY
COPY input/ /in/
RUN --mount=type=secret,id=ca-bundle --mount=type=secret,id=ccache-remote mkdir /out \\
    && echo "${CUDA_SOURCE} ${PYTHON_SOURCE} ${PYTHON_VERSION} ${SAGEBUILD_ENTRY}" > /out/args.txt \\
    && if test -s /run/secrets/ca-bundle; then echo present > /out/ca-bundle.txt; fi \\
    && if test -s /run/secrets/ccache-remote; then cp /run/secrets/ccache-remote /out/ccache-remote.txt; fi \\
    && sleep "$(cat /in/sleep)" \\
    && cp -r /in/*.whl /in/sagebuild-results /out/
FROM scratch AS wheel
COPY --from=build /out/ /
"""


def engine_up():
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def sleeping_build():
    """Processes of the slow build still running (the engine's containers are host processes)."""
    found = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if argv[:2] == [b"sleep", SLEEP_MARK.encode()]:
            found.append(pid)
    return found


def containers():
    done = subprocess.run(["docker", "ps", "-aq"], capture_output=True, text=True, timeout=30)
    return done.stdout.split()


def main():
    sagebuild = os.path.abspath(sys.argv[1])
    if not engine_up():
        print("docker_engine_check: no Docker engine answers (scripts/docker-engine.sh starts "
              "one): skipped")
        return 77
    tmp = tempfile.mkdtemp(prefix="sagebuild-docker-")
    try:
        root = os.path.join(tmp, "project")
        os.makedirs(os.path.join(root, "docker"))
        os.makedirs(os.path.join(root, "input"))
        with open(os.path.join(root, "matrix.yaml"), "w") as f:
            f.write(MATRIX)
        with open(os.path.join(root, "VERSION"), "w") as f:
            f.write("2.2.0\n")
        with open(os.path.join(root, "docker", "Dockerfile.linux"), "w") as f:
            f.write(DOCKERFILE)
        with open(os.path.join(root, "input", "sleep"), "w") as f:
            f.write("0")
        # A wheel of the entry's name with no binary: verification must refuse it.
        wheel = os.path.basename(fake_wheel(os.path.join(root, "input"), "2.11.0", "13.0.1",
                                            "cp312-cp312-linux_x86_64"))
        dist = os.path.join(root, "dist")
        os.makedirs(dist)
        with open(os.path.join(dist, "kept.txt"), "w") as f:
            f.write("the user's\n")
        # The build's own record, as the real Dockerfile exports it: what its compiles found.
        os.makedirs(os.path.join(root, "input", "sagebuild-results"))
        with open(os.path.join(root, "input", "sagebuild-results", ENTRY + ".json"), "w") as f:
            json.dump({"id": ENTRY, "status": "built", "python": "3.12.9",
                       "phases": {"kernels": 1.5, "binding": 2.0},
                       "compile_cache": {"compiles": 7, "local_hits": 0, "remote_hits": 6,
                                         "compiled": 1, "uncached": 0, "remote_errors": 0}}, f)
        remote = "redis://:" + REMOTE_PASSWORD + "@172.17.0.1:16379"
        env = dict(os.environ, SSL_CERT_FILE="/etc/ssl/certs/ca-certificates.crt",
                   CCACHE_REMOTE_STORAGE=remote)
        env.pop("SAGEBUILD_DOCKER_IMAGES", None)
        env.pop("GITHUB_ACTIONS", None)
        argv = [sagebuild, "--matrix", os.path.join(root, "matrix.yaml"), "build",
                "--backend", "docker", "--entry", ENTRY]
        out_dir = os.path.join(root, "build", "sagebuild", "docker-out", ENTRY)

        start = time.monotonic()
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
        seconds = time.monotonic() - start
        text = done.stdout + done.stderr
        args = open(os.path.join(out_dir, "args.txt")).read().split() if os.path.exists(
            os.path.join(out_dir, "args.txt")) else []
        check(f"the generated Bake file builds on the engine ({seconds:.0f} s): the target's "
              "arguments reach the build",
              args == ["image", "system", "3.12", ENTRY], f"{args}\n{text[-3000:]}")
        check("the CA bundle reaches the build as the secret 'ca-bundle'",
              os.path.exists(os.path.join(out_dir, "ca-bundle.txt")), text[-2000:])
        secret_file = os.path.join(out_dir, "ccache-remote.txt")
        check("ccache's remote storage reaches the build as the secret 'ccache-remote'",
              os.path.exists(secret_file) and open(secret_file).read() == remote, text[-2000:])
        bake_text = open(os.path.join(root, "build", "sagebuild", "docker-bake.json")).read()
        log_text = open(os.path.join(root, "build", "logs", "docker-bake.log")).read()
        check("its password is written nowhere: not in the Bake file, the log or the output",
              REMOTE_PASSWORD not in bake_text + log_text + text
              and "id=ccache-remote,env=CCACHE_REMOTE_STORAGE" in bake_text, bake_text[-1500:])
        with open(os.path.join(root, "build", "results", ENTRY + ".json")) as f:
            record = json.load(f)
        check("the build's own record comes back: its compile cache figures in the progress and "
              "build/results, its compile phases beside the bake's, the image's Python (not "
              "this host's)",
              "compile cache: 7 compiles: 6 from the remote cache, 1 compiled" in text
              and record.get("compile_cache", {}).get("remote_hits") == 6
              and record.get("python") == "3.12.9"
              and set(record.get("phases", {})) == {"docker", "kernels", "binding", "verify"},
              f"{record}\n{text[-2000:]}")
        check("the exported wheel is collected from the target's folder and verified on the host; "
              "failing verification, it stays out of dist/",
              done.returncode == 5 and "verification_failed" in text and wheel in text
              and os.listdir(dist) == ["kept.txt"], f"exit {done.returncode}\n{text[-3000:]}")

        done = subprocess.run([*argv[:-2], "--entry", ENTRY, "--images", "missing"],
                              capture_output=True, text=True, env=env, timeout=120)
        text = done.stdout + done.stderr
        check("an image the engine lacks stops the entry before any bake, naming the command that "
              "makes it",
              done.returncode != 0 and "the engine has no image sagebuild-base:debian99" in text
              and "scripts/docker-engine.sh start" in text and "docker buildx bake" not in text,
              text[-2000:])
        done = subprocess.run([sagebuild, "--matrix", os.path.join(root, "matrix.yaml"), "doctor",
                               "--backend", "docker", "--images", "missing"],
                              capture_output=True, text=True, env=env, timeout=120)
        text = done.stdout + done.stderr
        check("doctor --backend docker: the engine and buildx found, the missing image named",
              "ok       Docker (--backend docker)" in text
              and "PROBLEM  images of the entries" in text
              and "the engine has no image sagebuild-base:debian99" in text, text[-2000:])

        # A full disk where the wheel is exported (a 64 KiB tmpfs, a 1 MB wheel): the bake fails,
        # its error is shown, nothing reaches dist/, and the next run with space completes.
        export_root = os.path.join(root, "build", "sagebuild", "docker-out")
        os.makedirs(export_root, exist_ok=True)
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", export_root],
                                 capture_output=True).returncode == 0
        if mounted:
            big = fake_wheel(os.path.join(root, "input"), "2.11.0", "13.0.1",
                             "cp312-cp312-linux_x86_64", padding=1 << 20)
            try:
                done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
            finally:
                subprocess.run(["umount", export_root], capture_output=True)
            os.remove(big)
            fake_wheel(os.path.join(root, "input"), "2.11.0", "13.0.1", "cp312-cp312-linux_x86_64")
            text = done.stdout + done.stderr
            check("a full disk at the export: exit 4 with the bake's error, dist/ untouched",
                  done.returncode == 4 and "no space left on device" in text.lower()
                  and os.listdir(dist) == ["kept.txt"], text[-2500:])
            again = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
            check("with space again, the next run completes (the same outcome as the first)",
                  again.returncode == 5 and "verification_failed" in again.stdout + again.stderr,
                  (again.stdout + again.stderr)[-2000:])
        else:
            print("     (no tmpfs mount here: the full-disk case is not run)")

        # The docker client finds its plugins under $HOME/.docker: without them, no buildx.
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120,
                              env=dict(env, HOME=os.path.join(tmp, "home"),
                                       DOCKER_CONFIG=os.path.join(tmp, "home", ".docker")))
        text = done.stdout + done.stderr
        check("no buildx plugin: exit 4 before any bake, naming the plugin and how to get it",
              done.returncode == 4 and "has no buildx plugin" in text
              and "scripts/docker-engine.sh" in text and os.listdir(dist) == ["kept.txt"],
              text[-2000:])

        # Ctrl-C while the build runs inside the engine.
        with open(os.path.join(root, "input", "sleep"), "w") as f:
            f.write(SLEEP_MARK)
        before = containers()
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env=env)
        deadline = time.monotonic() + 120
        while not sleeping_build() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.5)
        running = bool(sleeping_build())
        proc.send_signal(signal.SIGINT)
        try:
            text, _ = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            text, _ = proc.communicate()
        gone_by = time.monotonic() + 20
        while sleeping_build() and time.monotonic() < gone_by:
            time.sleep(0.5)
        check("Ctrl-C during the bake: exit 130, the build inside the engine stopped, no "
              "container left, dist/ untouched",
              running and proc.returncode == 130 and not sleeping_build()
              and containers() == before and os.listdir(dist) == ["kept.txt"],
              f"running={running} exit {proc.returncode} left={sleeping_build()}\n{text[-2000:]}")
        with open(os.path.join(root, "input", "sleep"), "w") as f:
            f.write("0")
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
        text = done.stdout + done.stderr
        check("the next run after Ctrl-C completes (the same outcome as the first)",
              done.returncode == 5 and "verification_failed" in text, text[-2000:])

        # scripts/docker-engine.sh status: the images it finds with the engine up; with no
        # engine answering (a socket nobody serves), "not running", not every image "missing".
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts",
                              "docker-engine.sh")
        up = subprocess.run(["bash", script, "status"], capture_output=True, text=True, timeout=60)
        check("docker-engine.sh status lists the engine and the busybox image it runs",
              up.returncode == 0 and "image      sagebuild-base:tiny\n" in up.stdout, up.stdout)
        down = subprocess.run(["bash", script, "status"], capture_output=True, text=True, timeout=60,
                              env=dict(os.environ, DOCKER_HOST=f"unix://{tmp}/nobody.sock"))
        check("with the engine stopped, status says so and calls no image missing",
              down.returncode == 0 and "engine     not running" in down.stdout
              and "missing" not in down.stdout.replace("buildx     missing", ""), down.stdout)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return finish("docker_engine_check")


if __name__ == "__main__":
    sys.exit(main())
