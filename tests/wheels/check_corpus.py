#!/usr/bin/env python3
"""Runs `sagebuild verify-wheel --json` on every wheel of the corpus and checks that each fails
exactly the checks expected.json lists (the good wheel: none). Prints a table of the outcomes.

Usage: check_corpus.py SAGEBUILD CORPUS_DIR MATRIX
"""
import json
import os
import subprocess
import sys


def main():
    sagebuild, corpus, matrix = sys.argv[1:4]
    expected = json.load(open(os.path.join(corpus, "expected.json")))
    options = json.load(open(os.path.join(corpus, "options.json")))
    wrong = 0
    for wheel, want in sorted(expected.items()):
        done = subprocess.run([sagebuild, "--matrix", matrix, "verify-wheel", "--json",
                               os.path.join(corpus, wheel)] + options.get(wheel, []),
                              capture_output=True, text=True)
        report = json.loads(done.stdout)[0]
        got = sorted({f["check"] for f in report["findings"]})
        code_ok = done.returncode == (5 if want else 0)
        ok = got == want and code_ok
        wrong += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {wheel.split('/')[0]:<32} expected {','.join(want) or '-':<14}"
              f" got {','.join(got) or '-'} (exit {done.returncode})")
        if not ok:
            for f in report["findings"]:
                print(f"       {f['check']} {f['where']}: {f['message']}")
    print(f"{len(expected) - wrong} passed, {wrong} failed")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
