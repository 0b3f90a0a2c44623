#!/usr/bin/env python3
"""Runs `sagebuild verify-wheel --json` on every wheel of the corpus and checks that each fails
exactly the checks expected.json lists (the good wheel: none), that the JSON parses whatever the
entry names hold, and that each verification stays bounded (a few CPU seconds, a few hundred MiB)
and writes nothing where it runs. Prints a table of the outcomes.

Usage: check_corpus.py SAGEBUILD CORPUS_DIR MATRIX
"""
import json
import os
import resource
import subprocess
import sys
import tempfile

CPU_SECONDS, RSS_MIB = 5, 400


def children_usage():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main():
    sagebuild, corpus, matrix = sys.argv[1:4]
    expected = json.load(open(os.path.join(corpus, "expected.json")))
    options = json.load(open(os.path.join(corpus, "options.json")))
    wrong = 0
    for wheel, want in sorted(expected.items()):
        cpu_before, _ = children_usage()
        with tempfile.TemporaryDirectory() as cwd:
            done = subprocess.run([os.path.abspath(sagebuild), "--matrix", os.path.abspath(matrix), "verify-wheel", "--json",
                                   os.path.abspath(os.path.join(corpus, wheel))] + options.get(wheel, []),
                                  capture_output=True, text=True, errors="replace", cwd=cwd,
                                  env={**os.environ, "TMPDIR": cwd}, timeout=60)
            left = os.listdir(cwd)
        cpu, rss = children_usage()
        cpu -= cpu_before
        try:
            report = json.loads(done.stdout)[0]
        except ValueError:
            report = {"findings": [{"check": "(no JSON)", "where": "", "message": done.stdout[-300:]}]}
        got = sorted({f["check"] for f in report["findings"]})
        code_ok = done.returncode == (5 if want else 0)
        bounded = cpu < CPU_SECONDS and rss < RSS_MIB and not left
        ok = got == want and code_ok and bounded
        wrong += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {wheel.split('/')[0]:<32} expected {','.join(want) or '-':<14}"
              f" got {','.join(got) or '-'} (exit {done.returncode}, {cpu:.2f} CPU s)")
        if not bounded:
            print(f"       unbounded: {cpu:.1f} CPU s (limit {CPU_SECONDS}), peak RSS of any run so far "
                  f"{rss:.0f} MiB (limit {RSS_MIB}), left behind: {left}")
        if not ok:
            for f in report["findings"]:
                print(f"       {f['check']} {f['where']}: {f['message']}")
    print(f"{len(expected) - wrong} passed, {wrong} failed")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
