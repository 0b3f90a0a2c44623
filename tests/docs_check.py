#!/usr/bin/env python3
"""The docs say what the tool does, from its own tables:

- docs/verify-wheel.md's table of checks is the check catalogue (`sagebuild verify-wheel
  --list-checks --json`): every id, name and summary, in order, and nothing else;
- README.md's "N checks before publishing" and docs/verify-wheel.md's "N checks" name the
  catalogue's size.

--update rewrites the table from the catalogue.

Usage: docs_check.py SAGEBUILD REPO [--update]
"""
import json
import os
import re
import subprocess
import sys

from checklib import check, finish

START = "| id | name | checks that |\n| --- | --- | --- |\n"


def main():
    sagebuild, repo = sys.argv[1:3]
    update = "--update" in sys.argv
    checks = json.loads(subprocess.run([sagebuild, "verify-wheel", "--list-checks", "--json"],
                                       capture_output=True, text=True, check=True).stdout)
    table = START + "".join(f"| {c['id']} | {c['name']} | {c['summary']} |\n" for c in checks)
    path = os.path.join(repo, "docs", "verify-wheel.md")
    text = open(path).read()
    start = text.index(START)
    end = text.index("\n\n", start) + 1
    if update:
        with open(path, "w") as f:
            f.write(text[:start] + table + text[end:])
        text = open(path).read()
    check(f"docs/verify-wheel.md lists the {len(checks)} checks of the catalogue",
          text[start:end] == table, "run tests/docs_check.py SAGEBUILD REPO --update")
    for doc, pattern in (("README.md", r"(\d+) checks before publishing"),
                         (os.path.join("docs", "verify-wheel.md"), r"(\d+) checks")):
        counts = set(re.findall(pattern, open(os.path.join(repo, doc)).read()))
        check(f"{doc} counts {len(checks)} checks", counts <= {str(len(checks))}, f"says {sorted(counts)}")
    return finish("docs")


if __name__ == "__main__":
    sys.exit(main())
