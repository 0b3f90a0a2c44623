"""What the end-to-end check scripts share: named checks that print ok/FAIL with detail and are
counted for the exit status, a free loopback port for the servers they start, a minimal
matrix.yaml for a demo package, and fake tools (scripts, a CUDA toolkit whose nvcc says what it
is told)."""
import os
import socket
import stat

failures = []


def check(name, condition, detail=""):
    print(("ok   " if condition else "FAIL ") + name)
    if not condition:
        failures.append(name)
        if detail:
            print("     " + detail.replace("\n", "\n     "))


def finish(what):
    """Prints the tally; returns the exit status."""
    print(f"{what}: {len(failures)} failed")
    return 1 if failures else 0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


DEMO_MATRIX = """\
package:
  name: demo
  version: {{file: VERSION, regex: '^(.+)$'{version_extra}}}
  source_dir: src
  build_command: {build_command}
architectures: {{"9.0a": ">=12.0"}}
default_archs: ["9.0a"]
cuda: {{"13.0": {{version: "13.0.1"}}}}
torch:
  "2.11.0": {{cuda: ["13.0"], python: ["3.12"]}}
platforms: {{linux: {{tag: linux_x86_64, os: linux}}}}
profiles: {{all: {{}}}}
"""


def demo_matrix(build_command, version_extra=""):
    """matrix.yaml of a package "demo" whose version is in VERSION, built from src/ by
    `build_command` (a YAML list), for torch 2.11 / CUDA 13.0 / Python 3.12 on Linux."""
    return DEMO_MATRIX.format(build_command=build_command, version_extra=version_extra)


def write_script(path, body):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, stat.S_IRWXU)
    return path


def fake_toolkit(root, version, otherwise):
    """A CUDA toolkit whose nvcc reports `version` and does `otherwise` for anything else."""
    release = version.rsplit(".", 1)[0]
    write_script(os.path.join(root, "bin", "nvcc"),
                 f'if [ "$1" = "--version" ]; then\n'
                 f"  echo 'Cuda compilation tools, release {release}, V{version}'; exit 0\nfi\n"
                 + otherwise)
    return root
