#!/usr/bin/env python3
"""Every sagebuild command, run with known fake secrets in every variable it may read (GITHUB_TOKEN,
GH_TOKEN, TWINE_PASSWORD, SAGEBUILD_PUBLISH_PASSWORD), must not print them or write them into any
file it makes ($GITHUB_OUTPUT, $GITHUB_STEP_SUMMARY, indexes, logs, results). The network
commands are pointed at a closed loopback port, so they fail, and their errors are checked too.

Usage: secrets_check.py SAGEBUILD MATRIX_YAML
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from index_install_check import make_wheel  # noqa: E402

SECRETS = {
    "GITHUB_TOKEN": "ghp_FAKEsecretGITHUBtoken0123456789",
    "GH_TOKEN": "gho_FAKEsecretGHtoken0123456789",
    "TWINE_PASSWORD": "pypi-FAKEsecretTWINE0123456789",
    "SAGEBUILD_PUBLISH_PASSWORD": "FAKEsecretPUBLISH0123456789",
}


def main():
    sb, matrix = sys.argv[1], sys.argv[2]
    leaks = []
    with tempfile.TemporaryDirectory() as tmp:
        dist = os.path.join(tmp, "dist")
        os.makedirs(dist)
        wheel = os.path.join(dist, make_wheel(dist, "2.8.0", "12.9.1", "280.129"))
        env = dict(os.environ, **SECRETS)
        env.update({"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "sage/attention",
                    "GITHUB_API_URL": "http://127.0.0.1:1", "TWINE_USERNAME": "user",
                    "GITHUB_OUTPUT": os.path.join(tmp, "github_output"),
                    "GITHUB_STEP_SUMMARY": os.path.join(tmp, "step_summary")})
        m = ["--matrix", matrix]
        commands = [
            [*m, "validate"], [*m, "profiles"], [*m, "matrix", "--profile", "stable"],
            [*m, "matrix", "--profile", "default", "--format", "github"],
            [*m, "bake", "--profile", "stable", "-o", os.path.join(tmp, "bake.json")],
            [*m, "version"], [*m, "version", "--format", "github"], [*m, "version", "--format", "json"],
            ["verify-wheel", "--json", wheel], ["verify-wheel", wheel],
            ["index", "--no-verify", dist, "--out", os.path.join(tmp, "site")],
            ["summary", os.path.join(tmp, "no-results.json")],
            [*m, "build", "--env", "current", "--python", os.path.join(tmp, "no-python")],
            ["release", "--tag", "v2.2.0", "--retries", "0", "--timeout", "2", wheel],
            ["publish", "--repository-url", "http://127.0.0.1:1/", "--retries", "0", wheel],
            ["--help"], ["release", "--help"], ["publish", "--help"],
        ]
        for args in commands:
            done = subprocess.run([sb, *args], capture_output=True, text=True, env=env, timeout=120)
            for name, secret in SECRETS.items():
                if secret in done.stdout or secret in done.stderr:
                    leaks.append(f"{name} printed by: sagebuild {' '.join(args)}")
        for root, _, files in os.walk(tmp):
            for f in files:
                data = open(os.path.join(root, f), "rb").read()
                for name, secret in SECRETS.items():
                    if secret.encode() in data:
                        leaks.append(f"{name} written into {os.path.relpath(os.path.join(root, f), tmp)}")
    for leak in leaks:
        print("FAIL " + leak)
    print(f"secrets: {len(commands)} commands run, {len(leaks)} leaks")
    return 1 if leaks else 0


if __name__ == "__main__":
    sys.exit(main())
