#!/usr/bin/env python3
"""verify-wheel --import-test without downloading torch: each way it can be skipped says why, and
a wheel is never reported as imported when it was not.

- an interpreter of another Python version: "skipped: ... is Python 3.11, the wheel is for 3.12"
- an environment without torch: "skipped: ... has no torch"

(The full path, torch installed from the index and the wheel imported, is exercised on the GPU
machine with the real sageattention wheel: see docs/verify-wheel.md.)

Usage: check_import_test.py SAGEBUILD CORPUS_DIR MATRIX
"""
import glob
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checklib import check, finish  # noqa: E402


def pyenv_python(version):
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    found = sorted(glob.glob(os.path.join(root, "versions", f"{version}.*", "bin", f"python{version}")))
    return found[-1] if found else None


def report(sagebuild, matrix, wheel, *args):
    done = subprocess.run([sagebuild, "--matrix", matrix, "verify-wheel", "--json", *args, wheel],
                          capture_output=True, text=True)
    return json.loads(done.stdout)[0]


def import_result(sagebuild, matrix, wheel, python):
    r = report(sagebuild, matrix, wheel, "--import-python", python)
    # A skipped I001 is never counted among the checks that ran.
    check("a skipped import test is listed as skipped, not among the checks run",
          "I001" not in r["checks"] and [s["check"] for s in r["skipped"]] == ["I001"],
          f"checks {r['checks']} skipped {r['skipped']}")
    return r["import_test"]


def main():
    sagebuild, corpus, matrix = sys.argv[1:4]
    good = glob.glob(os.path.join(corpus, "good", "*.whl"))[0]
    other = pyenv_python("3.11") or "/usr/bin/python3"
    result = import_result(sagebuild, matrix, good, other)
    check("another Python is skipped with the reason",
          result.startswith("skipped: ") and "the wheel is for Python 3.12" in result, result)
    same = pyenv_python("3.12")
    if same:
        result = import_result(sagebuild, matrix, good, same)
        check("an environment without torch is skipped with the reason",
              result.startswith("skipped: ") and "has no torch" in result, result)
    else:
        print("no pyenv Python 3.12 here: the no-torch case was not run")
    # Without --import-test, I001 did not run: skipped with the reason, everywhere.
    r = report(sagebuild, matrix, good)
    check("without --import-test, I001 is skipped with the reason, not passed",
          "I001" not in r["checks"] and r["skipped"] == [{"check": "I001", "name": "import",
                                                          "reason": "not asked for (--import-test)"}],
          f"checks {r['checks']} skipped {r['skipped']}")
    text = subprocess.run([sagebuild, "--matrix", matrix, "verify-wheel", good], capture_output=True,
                          text=True).stdout
    check("the text report counts the checks that passed and the skipped one apart",
          "checks passed, 1 skipped" in text and "import test skipped: not asked for" in text, text)
    # A wheel whose name has no build tag (so no decoded torch): the pin then comes from
    # METADATA, and nothing may crash on the way (it once did).
    no_tag = glob.glob(os.path.join(corpus, "n002_no_build_tag", "*.whl"))[0]
    done = subprocess.run([sagebuild, "--matrix", matrix, "verify-wheel", "--json", "--ignore", "N002",
                           "--import-python", same or other, no_tag], capture_output=True, text=True)
    check("a wheel without a build tag does not crash verify-wheel",
          done.returncode in (0, 5) and "internal error" not in done.stderr,
          f"exit {done.returncode} {done.stderr.strip()[:120]}")
    return finish("import test")


if __name__ == "__main__":
    sys.exit(main())
