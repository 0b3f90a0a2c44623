#!/usr/bin/env python3
"""sagebuild matrix diff against a real git repository: an edit to matrix.yaml shows as the entries
each profile gains and loses against HEAD (table and JSON); an unknown revision and a revision
without matrix.yaml are usage errors that say so.

Usage: matrix_diff_check.py SAGEBUILD
"""
import json
import os
import subprocess
import sys
import tempfile

from checklib import check, demo_matrix, finish


def git(repo, *args):
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.invalid")
    subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, env=env)


def main():
    sb = sys.argv[1]
    with tempfile.TemporaryDirectory() as repo:
        git(repo, "init", "-q")
        with open(os.path.join(repo, "README"), "w") as f:
            f.write("first commit has no matrix.yaml\n")
        git(repo, "add", "README")
        git(repo, "commit", "-q", "-m", "start")
        with open(os.path.join(repo, "VERSION"), "w") as f:
            f.write("1.0.0\n")
        text = demo_matrix("[make]")
        with open(os.path.join(repo, "matrix.yaml"), "w") as f:
            f.write(text)
        git(repo, "add", ".")
        git(repo, "commit", "-q", "-m", "matrix")
        grown = text.replace('python: ["3.12"]', 'python: ["3.12", "3.13"]')
        assert grown != text
        with open(os.path.join(repo, "matrix.yaml"), "w") as f:
            f.write(grown)

        done = subprocess.run([sb, "matrix", "diff"], cwd=repo, capture_output=True, text=True)
        check("matrix diff: the profile that grew, with the new entry", done.returncode == 0
              and "1 profile changed" in done.stdout and "+ linux-" in done.stdout
              and "python313" in done.stdout, done.stdout + done.stderr)
        done = subprocess.run([sb, "matrix", "diff", "HEAD", "--format", "json"], cwd=repo,
                              capture_output=True, text=True)
        doc = json.loads(done.stdout) if done.returncode == 0 else []
        check("matrix diff --format json", len(doc) == 1 and doc[0]["before"] == 1 and doc[0]["after"] == 2
              and len(doc[0]["gained"]) == 1 and not doc[0]["lost"], done.stdout + done.stderr)
        done = subprocess.run([sb, "matrix", "diff", "no-such-rev"], cwd=repo, capture_output=True, text=True)
        check("an unknown revision: exit 2, named", done.returncode == 2 and "no-such-rev" in done.stderr,
              done.stderr)
        done = subprocess.run([sb, "matrix", "diff", "HEAD~1"], cwd=repo, capture_output=True, text=True)
        check("a revision without matrix.yaml: exit 2, said", done.returncode == 2
              and "has no matrix.yaml" in done.stderr, done.stderr)
    return finish("matrix diff checks")


if __name__ == "__main__":
    sys.exit(main())
