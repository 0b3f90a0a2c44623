#!/usr/bin/env python3
"""bench/results/README.md, the index of the recorded runs: each entry under bench/results/,
what it is (a folder's README title, else its name read as date-machine-what-commit) and which
documents cite it. An entry nothing cites has no place in the tree (git history keeps it):
`--check` fails naming it, and naming an index that differs from what this writes.

  python3 bench/results_index.py          # write the index
  python3 bench/results_index.py --check  # the test bench.results_index
"""

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "bench", "results")
INDEX = os.path.join(RESULTS, "README.md")
HEADER = """# bench/results

The data of recorded runs, one entry per run (a file, or a folder with its README), named
date-machine-what[-commit]. Kept here only while a document cites it; older runs are in git
history. Written by `python3 bench/results_index.py` (the test `bench.results_index` fails when
this index is stale or an entry is cited by nothing).

| entry | what | cited by |
| --- | --- | --- |
"""
# Documents cite some runs by pattern (bench/results/*-ncu-sm90-*.txt).
PATTERN = re.compile(r"bench/results/([\w*.-]+)")


def tracked_documents():
    """{path: text} of the tracked text files outside bench/results and this program."""
    files = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    texts = {}
    for rel in files:
        if rel.startswith("bench/results") or not rel.endswith(
            (".md", ".py", ".sh", ".cuh", ".h", ".cpp", ".txt", ".yaml", ".yml")
        ):
            continue
        try:
            with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
                texts[rel] = f.read()
        except (OSError, UnicodeDecodeError):
            continue
    return texts


def citations(entry, texts):
    """The documents that name an entry, or a pattern it matches."""
    stem = os.path.splitext(entry)[0]
    found = []
    for rel, text in sorted(texts.items()):
        if stem in text:
            found.append(rel)
            continue
        for m in PATTERN.finditer(text):
            pattern = m.group(1).rstrip(".")
            if "*" in pattern and re.fullmatch(re.escape(pattern).replace(r"\*", ".*"), entry):
                found.append(rel)
                break
    return found


def what(entry):
    path = os.path.join(RESULTS, entry)
    if os.path.isdir(path):
        for name in sorted(os.listdir(path)):
            if name.lower().startswith("readme"):
                with open(os.path.join(path, name), encoding="utf-8") as f:
                    return f.readline().lstrip("# ").strip()
    return os.path.splitext(entry)[0][len("2026-11-29-") :].replace("-", " ")


def index():
    """(the index's text, the entries nothing cites)."""
    texts = tracked_documents()
    rows, orphans = [], []
    for entry in sorted(os.listdir(RESULTS)):
        if entry == "README.md":
            continue
        cited = citations(entry, texts)
        if not cited:
            orphans.append(entry)
        shown = ", ".join(f"`{c}`" for c in cited[:3])
        if len(cited) > 3:
            shown += f" +{len(cited) - 3}"
        link = entry + ("/" if os.path.isdir(os.path.join(RESULTS, entry)) else "")
        rows.append(f"| [{link}]({link}) | {what(entry).replace('|', '/')} | {shown} |\n")
    return HEADER + "".join(rows), orphans


def main(argv):
    text, orphans = index()
    if argv[1:] == ["--check"]:
        try:
            with open(INDEX, encoding="utf-8") as f:
                stale = f.read() != text
        except OSError:
            stale = True
        for entry in orphans:
            print(
                f"results_index: bench/results/{entry} is cited by no document: remove it "
                "(git history keeps it) or cite it"
            )
        if stale:
            print(
                "results_index: bench/results/README.md is stale: run "
                "python3 bench/results_index.py"
            )
        return 1 if orphans or stale else 0
    if argv[1:]:
        sys.stderr.write("usage: results_index.py [--check]\n")
        return 2
    with open(INDEX, "w", encoding="utf-8") as f:
        f.write(text)
    print(
        f"results_index: {text.count(chr(10)) - HEADER.count(chr(10))} entries"
        + (f", {len(orphans)} cited by nothing" if orphans else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
