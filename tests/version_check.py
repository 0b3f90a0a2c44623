#!/usr/bin/env python3
"""sagebuild version and the version rules of sagebuild build, on real git repositories made in
temporary directories (the git executable makes them; sagebuild reads them through libgit2).

Covers: no tags, a release tag at HEAD (lightweight and annotated), a tag that disagrees with the
version file, GITHUB_REF tag builds, dev versions (package.version.untagged), shallow clones as
actions/checkout makes them, --check-tag, --format github, and --require-clean refusing a dirty
tree before anything is built.

Usage: version_check.py SAGEBUILD
"""
import json
import os
import subprocess
import sys
import tempfile

from checklib import check, demo_matrix, finish

# The build command must never run: these cases stop before any build.
NO_BUILD = '["{python}", "-c", "raise SystemExit(\'must not run\')"]'

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
}


class Repo:
    def __init__(self, root, version="1.1.0", untagged=None):
        self.root = root
        extra = f", untagged: {untagged}" if untagged else ""
        with open(os.path.join(root, "matrix.yaml"), "w") as f:
            f.write(demo_matrix(NO_BUILD, extra))
        self.write_version(version)
        os.makedirs(os.path.join(root, "src"), exist_ok=True)
        self.git("init", "-q", "-b", "main", ".")
        self.commit("initial")

    def write_version(self, version):
        with open(os.path.join(self.root, "VERSION"), "w") as f:
            f.write(version + "\n")

    def git(self, *args, cwd=None):
        env = dict(os.environ, **GIT_ENV)
        return subprocess.run(["git", *args], cwd=cwd or self.root, env=env, check=True,
                              capture_output=True, text=True).stdout

    def commit(self, message):
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)


def sagebuild(sb, root, *args, env=None):
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    full_env.update(env or {})
    return subprocess.run([sb, "--matrix", os.path.join(root, "matrix.yaml"), *args],
                          capture_output=True, text=True, env=full_env, cwd=root)


def version_json(sb, root, env=None):
    done = sagebuild(sb, root, "version", "--format", "json", env=env)
    if done.returncode != 0:
        return None, done
    return json.loads(done.stdout), done


def main():
    sb = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        # 1. No tags: the file's version; --check-tag refuses (not a release build).
        root = os.path.join(tmp, "plain")
        os.makedirs(root)
        repo = Repo(root)
        doc, done = version_json(sb, root)
        check("no tags: the file's version", doc and doc["version"] == "1.1.0"
              and doc["release_tag"] is None and doc["git"]["dirty"] is False, done.stderr)
        done = sagebuild(sb, root, "version", "--check-tag")
        check("no tags: --check-tag exits 3", done.returncode == 3
              and "not a release tag build" in done.stderr, done.stderr)

        # 2. A lightweight tag at HEAD equal to the version: a release build.
        repo.git("tag", "v1.1.0")
        done = sagebuild(sb, root, "version", "--check-tag", "--format", "short")
        check("release tag at HEAD passes --check-tag", done.returncode == 0
              and done.stdout.strip() == "1.1.0", done.stdout + done.stderr)

        # 3. An annotated tag that disagrees: exit 3, naming both versions and the file.
        repo.git("tag", "-d", "v1.1.0")
        repo.git("tag", "-a", "v1.2.0", "-m", "release")
        done = sagebuild(sb, root, "version")
        check("tag != version is a configuration error naming the file",
              done.returncode == 3 and "v1.2.0" in done.stderr and "VERSION says 1.1.0"
              in done.stderr and "edit the version in VERSION" in done.stderr, done.stderr)
        # GITHUB_REF decides in Actions: a branch build of that commit is not a tag build.
        doc, done = version_json(sb, root, {"GITHUB_REF": "refs/heads/main"})
        check("GITHUB_REF branch: not a tag build", doc and doc["release_tag"] is None,
              done.stderr)
        done = sagebuild(sb, root, "version", env={"GITHUB_REF": "refs/tags/v1.1.0"})
        check("GITHUB_REF tag equal to the version passes", done.returncode == 0, done.stderr)
        repo.git("tag", "-d", "v1.2.0")

        # 4. --format github writes step outputs.
        out = os.path.join(tmp, "github_output")
        done = sagebuild(sb, root, "version", "--format", "github",
                         env={"GITHUB_OUTPUT": out, "GITHUB_REF": "refs/tags/v1.1.0"})
        text = open(out).read() if os.path.exists(out) else ""
        check("--format github writes version and release_tag",
              done.returncode == 0 and "version=1.1.0\n" in text and "release_tag=v1.1.0\n"
              in text, done.stderr + text)

        # 5. --require-clean refuses a dirty tree before building anything.
        with open(os.path.join(root, "VERSION"), "a") as f:
            f.write("\n")
        done = sagebuild(sb, root, "build", "--env", "current", "--require-clean")
        check("--require-clean refuses a dirty tree (exit 3), nothing built",
              done.returncode == 3 and "uncommitted changes (VERSION)" in done.stderr
              and not os.path.exists(os.path.join(root, "dist")), done.stderr)

        # 6. Dev versions: X.Y.Z.devN with N commits since the last release tag.
        root = os.path.join(tmp, "dev")
        os.makedirs(root)
        repo = Repo(root, version="1.0.0", untagged="dev")
        repo.git("tag", "-a", "v1.0.0", "-m", "release")
        repo.write_version("1.1.0")
        repo.commit("bump")
        repo.commit("work")
        doc, done = version_json(sb, root)
        check("dev version counts commits since the tag", doc and doc["version"] == "1.1.0.dev2"
              and doc["git"]["nearest_tag"] == "v1.0.0" and doc["git"]["distance"] == 2,
              done.stdout + done.stderr)

        # 7. A shallow clone without tags cannot count: a clear error, not a wrong number.
        clone = os.path.join(tmp, "clone")
        repo.git("clone", "-q", "--depth", "1", "--no-tags", "file://" + root, clone, cwd=tmp)
        done = sagebuild(sb, clone, "version")
        check("shallow clone + dev version: error asking for fetch-depth: 0",
              done.returncode == 3 and "fetch-depth: 0" in done.stderr, done.stderr)

        # 8. Not a git checkout at all: fine for release versions.
        root = os.path.join(tmp, "nogit")
        os.makedirs(root)
        with open(os.path.join(root, "matrix.yaml"), "w") as f:
            f.write(demo_matrix(NO_BUILD))
        with open(os.path.join(root, "VERSION"), "w") as f:
            f.write("3.0.0\n")
        doc, done = version_json(sb, root)
        check("outside git: the file's version, git null", doc and doc["version"] == "3.0.0"
              and doc["git"] is None, done.stderr)

    return finish("version checks")


if __name__ == "__main__":
    sys.exit(main())
