#!/usr/bin/env python3
"""sagebuild build --env current when things go wrong: each case must end with a clear message,
the documented exit code (4 build failure, 2 usage), and nothing in dist/.

Usage: build_failures_check.py SAGEBUILD TORCH_PYTHON
"""
import os
import shutil
import subprocess
import sys
import tempfile

from checklib import check, demo_matrix, finish



def build_demo(sagebuild, tmp, command, python, env=None):
    """The demo package (tests/checklib.py) in `tmp`, built by `command` with --env current."""
    with open(os.path.join(tmp, "matrix.yaml"), "w") as f:
        f.write(demo_matrix(command))
    with open(os.path.join(tmp, "VERSION"), "w") as f:
        f.write("1.0\n")
    os.makedirs(os.path.join(tmp, "src"))
    return subprocess.run([sagebuild, "--matrix", os.path.join(tmp, "matrix.yaml"), "build",
                           "--env", "current", "--python", python], capture_output=True, text=True,
                          env=env)


def run_case(sagebuild, name, command, python, want_code, want_text):
    with tempfile.TemporaryDirectory() as tmp:
        done = build_demo(sagebuild, tmp, command, python)
        dist = os.path.join(tmp, "dist")
        empty = not os.path.isdir(dist) or not os.listdir(dist)
        check(f"{name}: exit {want_code}, '{want_text}', dist/ empty",
              done.returncode == want_code and want_text in done.stderr and empty,
              f"exit {done.returncode}\n{done.stdout}{done.stderr}")


def main():
    sagebuild, torch_python = sys.argv[1:3]
    plain_python = shutil.which("python3")
    cases = [
        ("missing interpreter", '["{python}", "-c", "pass"]', "/nonexistent/python3", 4,
         "cannot run '/nonexistent/python3'"),
        ("interpreter without torch", '["{python}", "-c", "pass"]', plain_python, 4,
         "cannot import torch"),
        ("failing build command", '["{python}", "-c", "import sys; print(\\"compiler says no\\"); sys.exit(3)"]',
         torch_python, 4, "failed (exit code 3); log:"),
        ("build that makes no wheel", '["{python}", "-c", "pass"]', torch_python, 4, "produced no wheel"),
    ]
    for c in cases:
        run_case(sagebuild, *c)
    secret_in_child_output(sagebuild, torch_python)
    return finish("build failures")


def secret_in_child_output(sagebuild, python):
    """A build command that prints credentials from the environment (as ccache does when it cannot
    parse its remote storage's URL): they reach neither the output nor the log nor the results."""
    password, token = "FAKEccachePASSWORD0123456789", "pypi-FAKEtwineTOKEN0123456789"
    env = dict(os.environ, CCACHE_REMOTE_STORAGE=f"redis://{password}@:6379", TWINE_PASSWORD=token)
    command = ('["{python}", "-c", "import os, sys; print(\\"ccache: error: Cannot parse URL\\", '
               'os.environ[\\"CCACHE_REMOTE_STORAGE\\"], os.environ[\\"TWINE_PASSWORD\\"]); sys.exit(3)"]')
    with tempfile.TemporaryDirectory() as tmp:
        done = build_demo(sagebuild, tmp, command, python, env)
        written = ""
        for folder in ("build/logs", "build/results"):
            for name in os.listdir(os.path.join(tmp, folder)):
                with open(os.path.join(tmp, folder, name), errors="replace") as f:
                    written += f.read()
        text = done.stdout + done.stderr
        check("credentials a child prints reach no output, log or results file (masked as ***)",
              done.returncode == 4 and "Cannot parse URL redis://***@:6379" in text
              and "redis://***@:6379" in written
              and not any(s in text + written for s in (password, token)), text[-2000:])


if __name__ == "__main__":
    sys.exit(main())
