#!/usr/bin/env python3
"""Every sagebuild command, run with known fake secrets in every variable it may read (GITHUB_TOKEN,
GH_TOKEN, TWINE_PASSWORD, SAGEBUILD_PUBLISH_PASSWORD), in variables known only by their names'
patterns (SCCACHE_WEBDAV_PASSWORD, AWS_SECRET_ACCESS_KEY, UV_PUBLISH_TOKEN, ...) and in a URL's
user information, must not print them or write them into any file it makes ($GITHUB_OUTPUT,
$GITHUB_STEP_SUMMARY, indexes, logs, results), in any spelling (raw, percent-encoded with upper-
or lower-case hex, base64 of user:password). Inputs that quote the secrets on purpose (a results
file for `summary`, a 70 KiB line whose secret straddles the output filter's 64 KiB piece) check
that masking happens where the text leaves, not where it was made. The network commands are
pointed at a closed loopback port, so they fail, and their errors are checked too.

Usage: secrets_check.py SAGEBUILD MATRIX_YAML
"""
import base64
import json
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
    # Known by pattern only.
    "SCCACHE_WEBDAV_PASSWORD": "FAKEsecret/webdav+0123456789",
    "SCCACHE_REDIS_PASSWORD": "FAKEsecretREDIS0123456789",
    "AWS_SECRET_ACCESS_KEY": "FAKEsecretAWS0123456789",
    "UV_PUBLISH_TOKEN": "FAKEsecretUV0123456789",
}
# A credential in a URL of a variable no list names.
URL_USER, URL_PASSWORD = "mirroruser", "FAKEsecret/mirror0123456789"
URL_VARIABLE = ("MY_MIRROR", f"https://{URL_USER}:{URL_PASSWORD.replace('/', '%2f')}@mirror.invalid/simple")


def spellings(secret, user=""):
    """Every form in which the secret may leak."""
    encoded = "".join(c if c.isalnum() or c in "-._~" else f"%{ord(c):02X}" for c in secret)
    pair = base64.b64encode(f"{user}:{secret}".encode()).decode().rstrip("=")
    return {secret, encoded, encoded.lower() if "%" in encoded else encoded, pair,
            pair.replace("+", "-").replace("/", "_")}


def all_spellings():
    out = {}
    for name, secret in SECRETS.items():
        for form in spellings(secret):
            out[form] = name
    for form in spellings(URL_PASSWORD, URL_USER):
        out[form] = URL_VARIABLE[0]
    return out


def main():
    sb, matrix = sys.argv[1], sys.argv[2]
    leaks = []
    forms = all_spellings()
    with tempfile.TemporaryDirectory() as tmp:
        dist = os.path.join(tmp, "dist")
        os.makedirs(dist)
        wheel = os.path.join(dist, make_wheel(dist, "2.8.0", "12.9.1", "280.129"))
        env = dict(os.environ, **SECRETS)
        env[URL_VARIABLE[0]] = URL_VARIABLE[1]
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
        # A results file that quotes every secret: summary writes it to $GITHUB_STEP_SUMMARY and,
        # without that variable, to stdout.
        quoted = " ".join([*SECRETS.values(), URL_PASSWORD, URL_VARIABLE[1]])
        results = os.path.join(tmp, "results.json")
        with open(results, "w") as f:
            json.dump({"entry": "linux-x", "status": "failed", "message": f"ccache: {quoted}",
                       "log": f"logs/{SECRETS['UV_PUBLISH_TOKEN']}.log"}, f)
        commands.append(["summary", results])
        # One line longer than the output filter's 64 KiB piece, a secret across the cut.
        secret = SECRETS["AWS_SECRET_ACCESS_KEY"]
        long_line = "a" * (65536 - len('{"input": "') - 6) + secret + "a" * 5000
        stdin = {len(commands): long_line + "\n"}
        commands.append(["parse-wheel-names"])
        for i, args in enumerate(commands):
            done = subprocess.run([sb, *args], capture_output=True, text=True, env=env, timeout=120,
                                  input=stdin.get(i, ""))
            for form, name in forms.items():
                if form in done.stdout or form in done.stderr:
                    leaks.append(f"{name} ({form!r}) printed by: sagebuild {' '.join(args)[:200]}")
        no_summary = dict(env)
        del no_summary["GITHUB_STEP_SUMMARY"]
        done = subprocess.run([sb, "summary", results], capture_output=True, text=True, env=no_summary, timeout=120)
        for form, name in forms.items():
            if form in done.stdout or form in done.stderr:
                leaks.append(f"{name} ({form!r}) printed by: sagebuild summary (to stdout)")
        os.remove(results)
        for root, _, files in os.walk(tmp):
            for f in files:
                data = open(os.path.join(root, f), "rb").read()
                for secret, name in forms.items():
                    if secret.encode() in data:
                        leaks.append(f"{name} written into {os.path.relpath(os.path.join(root, f), tmp)}")
    for leak in leaks:
        print("FAIL " + leak)
    print(f"secrets: {len(commands)} commands run, {len(leaks)} leaks")
    return 1 if leaks else 0


if __name__ == "__main__":
    sys.exit(main())
