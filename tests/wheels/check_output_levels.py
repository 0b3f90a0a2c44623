#!/usr/bin/env python3
"""How much verify-wheel says: -q/--quiet prints only the wheels that failed (and the count on
stderr), -v/--verbose lists every check's outcome after each report, and the two together are a
usage error in sagebuild's voice.

Usage: check_output_levels.py SAGEBUILD CORPUS_DIR MATRIX
"""
import glob
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checklib import check, finish  # noqa: E402


def main():
    sagebuild, corpus, matrix = sys.argv[1:4]
    good = glob.glob(os.path.join(corpus, "good", "*.whl"))[0]
    bad = glob.glob(os.path.join(corpus, "r002_wrong_hash", "*.whl"))[0]

    def run(*args):
        return subprocess.run([sagebuild, "--matrix", matrix, *args], capture_output=True, text=True)

    normal = run("verify-wheel", good, bad)
    check("by default both reports are printed",
          normal.stdout.startswith("ok ") and "\nFAIL " in normal.stdout,
          normal.stdout[-800:])
    for flag in ("-q", "--quiet"):
        quiet = run(flag, "verify-wheel", good, bad)
        check(f"{flag}: only the failed wheel's report, the count on stderr, exit 5",
              quiet.returncode == 5 and not quiet.stdout.startswith("ok ")
              and "\nok " not in quiet.stdout and quiet.stdout.startswith("FAIL ")
              and "R002" in quiet.stdout
              and "1 of 2 wheels failed verification" in quiet.stderr,
              f"exit {quiet.returncode}\n{quiet.stdout[-800:]}{quiet.stderr}")
    after = run("verify-wheel", good, "--quiet")
    check("a passing wheel under --quiet (given after the command) prints nothing, exit 0",
          after.returncode == 0 and after.stdout == "" and after.stderr == "",
          f"exit {after.returncode}\n{after.stdout}{after.stderr}")

    listed = subprocess.run([sagebuild, "verify-wheel", "--list-checks", "--json"],
                            capture_output=True, text=True)
    verbose = run("-v", "verify-wheel", good, bad)
    lines = verbose.stdout.splitlines()
    passed = [l.split()[1] for l in lines if l.strip().startswith("passed ")]
    failed = [l.split()[1] for l in lines if l.strip().startswith("failed ")]
    skipped = [l for l in lines if l.strip().startswith("skipped I001 import (not asked for")]
    check("--verbose lists every check's outcome: the failed one as failed, I001 skipped with why",
          failed == ["R002"] and len(skipped) == 2
          and "B001" in passed and listed.returncode == 0,
          verbose.stdout[-1500:])

    both = run("-q", "-v", "validate")
    check("--quiet with --verbose is a usage error in sagebuild's voice",
          both.returncode == 2 and both.stderr.startswith("sagebuild: error: ")
          and "excludes" in both.stderr, f"exit {both.returncode} {both.stderr}")
    return finish("output levels")


if __name__ == "__main__":
    sys.exit(main())
