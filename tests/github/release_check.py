#!/usr/bin/env python3
"""sagebuild release against a local GitHub stand-in (fake_github.py) on 127.0.0.1: creation,
pagination, idempotent re-runs, --clobber, drafts, GitHub Enterprise prefixes, and every injected
fault (5xx, dropped connections, stalls, primary and secondary rate limits, an upload stored
before a 502, a half-finished upload) ending in success after retries or in a clear error, never
a duplicate or half-uploaded asset. The token must appear in no output.

Usage: release_check.py SAGEBUILD
"""
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import fake_github  # noqa: E402
from checklib import check, fake_wheel, finish  # noqa: E402

TOKEN = "ghp_FAKEtoken0123456789abcdefSECRET"
TAG_MISMATCH = "v9.9.9"  # the tag test's: run() passes it as it is
REPO = "sage/attention"
outputs = []


def run(sb, api_base, *args, token=TOKEN, verify=False):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "GH_"))}
    env.update({"GITHUB_API_URL": api_base, "GITHUB_REPOSITORY": REPO})
    if token:
        env["GITHUB_TOKEN"] = token
    # The fault tests attach random bytes named like wheels: verification is tested on its own.
    flags = ([] if verify else ["--no-verify"]) + any_tag(args)
    done = subprocess.run([sb, "release", "--retry-wait", "0.05", "--timeout", "2", *flags, *args],
                          capture_output=True, text=True, env=env, timeout=120)
    outputs.append(done.stdout + done.stderr)
    return done


def any_tag(args):
    """["--any-tag"] where a test attaches its 2.2.0 stand-ins to a release of its own (v3.0.0,
    v5.0.0, ...): tags that do not name the wheels' version, which release refuses without it
    (tested on its own, with TAG_MISMATCH)."""
    tag = args[args.index("--tag") + 1] if "--tag" in args else ""
    return [] if tag in ("", "v2.2.0", TAG_MISMATCH) else ["--any-tag"]


def start(sb, api_base, *args, tmpdir=None):
    """The release command running in the background (run()'s environment, --no-verify), with
    its own TMPDIR when given (what it leaves there is its own, whatever runs beside it)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "GH_"))}
    env.update({"GITHUB_API_URL": api_base, "GITHUB_REPOSITORY": REPO, "GITHUB_TOKEN": TOKEN})
    if tmpdir:
        env["TMPDIR"] = tmpdir
    return subprocess.Popen([sb, "release", "--retry-wait", "0.05", "--no-verify", *any_tag(args), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def assets_of(state, tag):
    for r in state.releases:
        if r["tag_name"] == tag:
            return state.assets.get(r["id"], [])
    return []


def consistent(state, tag, files):
    """Each file exactly once, complete, with its content; nothing else."""
    assets = assets_of(state, tag)
    names = sorted(a["name"] for a in assets)
    want = sorted(os.path.basename(f) for f in files)
    if names != want:
        return False, f"assets {names}, want {want}"
    for a in assets:
        data = open([f for f in files if os.path.basename(f) == a["name"]][0], "rb").read()
        if a["state"] != "uploaded" or a["data"] != data:
            return False, f"{a['name']}: state {a['state']}, {len(a['data'])} of {len(data)} bytes"
    return True, ""


def token_stays_home(sb):
    """The token goes to the API's host and its upload host only: never to a host a Link header
    or an upload_url names; answers of the wrong types are errors, never a crash; an asset
    without a digest is not taken for the same file."""
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for i in range(3):
            path = os.path.join(tmp, f"sageattention-2.2.0-280.129-cp31{i}-cp31{i}-linux_x86_64.whl")
            with open(path, "wb") as f:
                f.write(os.urandom(1000))
            files.append(path)
        state, stop = fake_github.start(TOKEN, REPO)
        try:
            api = state.api_base
            done = run(sb, api, "--tag", "v5.0.0", *files)
            check("a release for the host tests", done.returncode == 0, done.stderr[-400:])
            state.link_elsewhere = True
            done = run(sb, api, "--tag", "v5.0.0", *files)
            check("a Link header naming another host: refused, the token not sent there",
                  done.returncode != 0 and "not sent there" in done.stderr
                  and not any(auth for _, _, auth in state.elsewhere_log),
                  done.stderr[-400:] + str(state.elsewhere_log[:2]))
            state.link_elsewhere = False
            state.upload_elsewhere = True
            done = run(sb, api, "--tag", "v5.1.0", *files[:1])
            check("an upload_url on another host: refused, nothing sent there",
                  done.returncode != 0 and "not sent there" in done.stdout + done.stderr
                  and not state.elsewhere_log,
                  done.stderr[-400:] + str(state.elsewhere_log[:2]))
            state.upload_elsewhere = False
            # An asset of the same name and size but other bytes, listed without a digest.
            rel = [r for r in state.releases if r["tag_name"] == "v5.0.0"][0]
            same_size = os.path.join(tmp, "other", os.path.basename(files[0]))
            os.makedirs(os.path.dirname(same_size))
            with open(same_size, "wb") as f:
                f.write(os.urandom(1000))
            state.drop_digests = True
            done = run(sb, api, "--tag", "v5.0.0", same_size)
            check("an asset without a digest is not 'the same' for its size: refused without --clobber",
                  done.returncode != 0 and "--clobber" in done.stdout, done.stdout + done.stderr[-400:])
            done = run(sb, api, "--tag", "v5.0.0", "--clobber", same_size)
            stored = [a for a in state.assets[rel["id"]] if a["name"] == os.path.basename(same_size)]
            check("... and replaced with --clobber",
                  done.returncode == 0 and stored and stored[0]["data"] == open(same_size, "rb").read(),
                  done.stdout + done.stderr[-400:])
            state.drop_digests = False
            # Answers of the wrong types, where each field is read.
            wrong = [("GET", r"/releases/tags/", {"id": "101", "upload_url": 7, "html_url": None}),
                     ("GET", r"/releases/tags/", {"id": rel["id"], "upload_url": ["x"], "tag_name": 5}),
                     ("GET", r"/assets", [{"name": os.path.basename(files[0]), "size": "1000",
                                           "digest": 7, "state": [], "id": "x"}]),
                     ("GET", r"/assets", [{"name": 5}, "text", None, 3]),
                     ("GET", r"/releases/tags/", ["not", "an", "object"])]
            for method, pattern, doc in wrong:
                state.add_fault(method, pattern, "json", doc)
                done = run(sb, api, "--tag", "v5.0.0", files[0])
                state.faults.clear()
                check(f"wrong types in an answer ({str(doc)[:60]}): an error or a result, no crash",
                      done.returncode in (0, 6) and "internal error" not in done.stderr,
                      f"exit {done.returncode}: {done.stderr[-400:]}")
        finally:
            stop()


def main():
    sb = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for i in range(5):  # more than a page of assets (the fake pages by 2)
            path = os.path.join(tmp, f"sageattention-2.2.0-280.129-cp31{i}-cp31{i}-linux_x86_64.whl")
            with open(path, "wb") as f:
                f.write(os.urandom(200_000 + i))
            files.append(path)

        state, stop = fake_github.start(TOKEN, REPO)
        try:
            api = state.api_base
            # 1. A new release with five assets.
            done = run(sb, api, "--tag", "v2.2.0", *files)
            ok, why = consistent(state, "v2.2.0", files)
            check("creates the release and uploads every asset", done.returncode == 0 and ok,
                  why + done.stdout + done.stderr)

            # 2. Re-run: nothing uploaded again.
            before = sum(1 for m, p, s in state.log if m == "POST" and "/assets" in p)
            done = run(sb, api, "--tag", "v2.2.0", *files)
            after = sum(1 for m, p, s in state.log if m == "POST" and "/assets" in p)
            check("a re-run skips assets with the same content", done.returncode == 0
                  and after == before and done.stdout.count("already there") == 5, done.stdout)

            # 3. Same name, other content: refused, then replaced with --clobber.
            changed = os.path.join(tmp, "changed")
            os.makedirs(changed)
            replacement = os.path.join(changed, os.path.basename(files[0]))
            with open(replacement, "wb") as f:
                f.write(b"different content")
            done = run(sb, api, "--tag", "v2.2.0", replacement)
            ok, _ = consistent(state, "v2.2.0", files)
            check("a different asset of the same name is refused (exit 6), left alone",
                  done.returncode == 6 and "--clobber" in done.stdout + done.stderr and ok,
                  done.stdout + done.stderr)
            done = run(sb, api, "--tag", "v2.2.0", "--clobber", replacement)
            ok, why = consistent(state, "v2.2.0", [replacement] + files[1:])
            check("--clobber replaces it", done.returncode == 0 and ok and "replaced" in done.stdout,
                  why + done.stdout + done.stderr)

            # 4. Faults on every kind of call; each ends in success with nothing duplicated.
            for kind, arg, method, pattern in [
                ("status", 502, "GET", r"/releases/tags/"),
                ("status", 503, "POST", r"/releases$"),
                ("drop", None, "GET", r"/assets$"),
                ("primary", 1, "GET", r"/assets$"),
                ("secondary", 1, "POST", r"/assets$"),
                ("status", 500, "POST", r"/assets$"),
                ("drop", None, "POST", r"/assets$"),
                ("stall", 4, "POST", r"/assets$"),
                ("store_502", None, "POST", r"/assets$"),
                ("partial", None, "POST", r"/assets$"),
            ]:
                state.add_fault(method, pattern, kind, arg)
            done = run(sb, api, "--tag", "v3.0.0", *files)
            ok, why = consistent(state, "v3.0.0", files)
            check("every injected fault ends in success, each asset once and complete",
                  done.returncode == 0 and ok and not state.faults,
                  why + f" faults left: {len(state.faults)}\n" + done.stdout + done.stderr)
            check("retries are reported", "retrying in" in done.stderr, done.stderr)

            # 5. A half-finished upload left by an earlier run is replaced.
            rel = [r for r in state.releases if r["tag_name"] == "v3.0.0"][0]
            state.assets[rel["id"]] = [a for a in state.assets[rel["id"]] if a["name"] != os.path.basename(files[1])]
            state.add_asset(rel["id"], os.path.basename(files[1]), b"half", state="starter")
            done = run(sb, api, "--tag", "v3.0.0", *files)
            ok, why = consistent(state, "v3.0.0", files)
            check("a 'starter' asset from a failed run is removed and uploaded again",
                  done.returncode == 0 and ok, why + done.stdout + done.stderr)

            # 6. A draft release is found through the list (the tags endpoint hides drafts).
            state.releases.append({"id": state.new_id(), "tag_name": "v4.0.0", "name": "v4.0.0",
                                   "body": "", "draft": True})
            for i in range(3):  # push it past the first page of releases
                state.releases.append({"id": state.new_id(), "tag_name": f"v0.{i}", "name": "",
                                       "body": "", "draft": False})
            done = run(sb, api, "--tag", "v4.0.0", "--draft", files[0])
            drafts = [r for r in state.releases if r["tag_name"] == "v4.0.0"]
            check("an existing draft is used, not duplicated", done.returncode == 0
                  and len(drafts) == 1 and len(assets_of(state, "v4.0.0")) == 1,
                  done.stdout + done.stderr)

            # 7. Clear errors.
            done = run(sb, api, "--tag", "v2.2.0", files[0], token="ghp_wrongTOKEN")
            outputs.append("")  # the wrong token is not the secret under test
            check("a rejected token: exit 6 and what to do", done.returncode == 6
                  and "401" in done.stderr and "GITHUB_TOKEN" in done.stderr, done.stderr)
            check("the rejected token is not printed", "ghp_wrongTOKEN" not in done.stdout + done.stderr)
            done = run(sb, api, "--tag", "v2.2.0", "--repo", "sage/missing", files[0])
            check("an unknown repository: 404 with advice", done.returncode == 6
                  and "404" in done.stderr and "sage/missing" in done.stderr, done.stderr)
            state.add_fault("GET", r"/releases/tags/", "primary", 3600)
            done = run(sb, api, "--tag", "v2.2.0", "--retry-max-wait", "5", files[0])
            check("a rate limit that resets in an hour: a clear error, no hang", done.returncode == 6
                  and "rate limited" in done.stderr, done.stderr)
            state.log.clear()
            done = run(sb, api, "--tag", TAG_MISMATCH, *files)
            check("a tag that does not name the wheels' version: exit 2 before any request, "
                  "naming the tag to use", done.returncode == 2 and not state.log
                  and "tag the release v2.2.0" in done.stderr
                  and "--tag v9.9.9 says version 9.9.9" in done.stderr, done.stderr)
            done = run(sb, api, "--tag", "v2.2.0", files[0], token="")
            check("no token: usage error", done.returncode == 2 and "GITHUB_TOKEN" in done.stderr,
                  done.stderr)
            done = run(sb, api, "--tag", "v2.2.0", files[0], token="", verify=True)
            check("no token: said before the wheels are verified and labelled", done.returncode == 2
                  and "GITHUB_TOKEN" in done.stderr and "verification" not in done.stderr, done.stderr)
            state.add_fault("GET", r"/releases/tags/", "status", 502)
            state.add_fault("GET", r"/releases/tags/", "status", 502)
            state.add_fault("GET", r"/releases/tags/", "status", 502)
            done = run(sb, api, "--tag", "v2.2.0", "--retries", "2", files[0])
            check("persistent 5xx: gives up after --retries with the status", done.returncode == 6
                  and "502" in done.stderr, done.stderr)
        finally:
            stop()

        # 8. GitHub Enterprise: the API under /api/v3, uploads on their own host.
        state, stop = fake_github.start(TOKEN, REPO, prefix="/api/v3")
        try:
            done = run(sb, state.api_base, "--tag", "v2.2.0", *files[:2])
            ok, why = consistent(state, "v2.2.0", files[:2])
            check("GITHUB_API_URL with a path prefix (Enterprise)", done.returncode == 0 and ok,
                  why + done.stdout + done.stderr)
        finally:
            stop()

        # 9. Before anything is uploaded: verification, variant labels, a set that resolves.
        built = os.path.join(tmp, "built")
        os.makedirs(built)
        w29 = fake_wheel(built, "2.9.0", "12.8.1", "cp312-cp312-manylinux_2_28_x86_64")
        w_universal = fake_wheel(built, "2.10.0", "13.0.1", "py3-none-manylinux_2_28_x86_64", stable=True)
        state, stop = fake_github.start(TOKEN, REPO)
        try:
            api = state.api_base
            done = run(sb, api, "--tag", "v4.0.0", w29, verify=True)
            check("a wheel that fails verification: exit 5, nothing uploaded",
                  done.returncode == 5 and not assets_of(state, "v4.0.0") and "B001" in done.stderr,
                  done.stdout + done.stderr)
            done = run(sb, api, "--tag", "v4.0.0", "--dry-run", w29, w_universal)
            check("--dry-run: the labelled names, no request made",
                  done.returncode == 0 and not state.log
                  and "sageattention-2.2.0+cu128torch2.9-290.128-cp312" in done.stdout
                  and "sageattention-2.2.0+cu130-2100.130-py3-none" in done.stdout, done.stdout + done.stderr)
            # --delivered-dir: the labelled copies kept, byte for byte what is uploaded below
            # (attested in the workflow); a second run is fine, another file of a name is refused.
            kept = os.path.join(tmp, "delivered")
            done = run(sb, api, "--tag", "v4.0.0", "--dry-run", "--delivered-dir", kept, w29, w_universal)
            kept_names = sorted(os.listdir(kept)) if os.path.isdir(kept) else []
            check("--delivered-dir keeps the labelled copies", done.returncode == 0 and kept_names == [
                "sageattention-2.2.0+cu128torch2.9-290.128-cp312-cp312-manylinux_2_28_x86_64.whl",
                "sageattention-2.2.0+cu130-2100.130-py3-none-manylinux_2_28_x86_64.whl"],
                  f"{kept_names}\n{done.stdout}{done.stderr}")
            again = run(sb, api, "--tag", "v4.0.0", "--dry-run", "--delivered-dir", kept, w29, w_universal)
            check("--delivered-dir again: the same copies, no error", again.returncode == 0, again.stdout + again.stderr)
            clash = os.path.join(kept, kept_names[0]) if kept_names else os.path.join(kept, "x")
            with open(clash, "wb") as f:
                f.write(b"the user's own file")
            refused = run(sb, api, "--tag", "v4.0.0", "--dry-run", "--delivered-dir", kept, w29, w_universal)
            check("--delivered-dir holding another file of a name: exit 6, the file left alone",
                  refused.returncode == 6 and "already holds another" in refused.stderr
                  and open(clash, "rb").read() == b"the user's own file", refused.stdout + refused.stderr)
            shutil.rmtree(kept)
            done = run(sb, api, "--tag", "v4.0.0", "--delivered-dir", kept, w29, w_universal)
            names = sorted(a["name"] for a in assets_of(state, "v4.0.0"))
            check("wheels are attached under their variants' local versions", done.returncode == 0 and names == [
                "sageattention-2.2.0+cu128torch2.9-290.128-cp312-cp312-manylinux_2_28_x86_64.whl",
                "sageattention-2.2.0+cu130-2100.130-py3-none-manylinux_2_28_x86_64.whl"], f"{names}\n{done.stdout}{done.stderr}")
            kept_bytes = {n: open(os.path.join(kept, n), "rb").read() for n in sorted(os.listdir(kept))}
            check("the --delivered-dir copies are the uploaded bytes",
                  kept_bytes == {a["name"]: a["data"] for a in assets_of(state, "v4.0.0")}, str(sorted(kept_bytes)))
            again = run(sb, api, "--tag", "v4.0.0", w29, w_universal)
            check("labelling is deterministic: a re-run finds the same assets", again.returncode == 0
                  and again.stdout.count("already there") == 2, again.stdout + again.stderr)
            # The user rebuilds one of them: its labelled copy is refused, and the refusal names the
            # file they passed and its digest (the copy's digest is of no file of theirs).
            os.makedirs(os.path.join(tmp, "rebuilt"), exist_ok=True)
            rebuilt = fake_wheel(os.path.join(tmp, "rebuilt"), "2.9.0", "12.8.1",
                                 "cp312-cp312-manylinux_2_28_x86_64", padding=100)
            digest = hashlib.sha256(open(rebuilt, "rb").read()).hexdigest()
            done = run(sb, api, "--tag", "v4.0.0", rebuilt)
            check("a changed wheel is refused naming the file passed and its sha256",
                  done.returncode == 6 and "is already on the release" in done.stdout + done.stderr
                  and f"is the labelled copy of {rebuilt} (that file: sha256 {digest}" in done.stdout,
                  done.stdout + done.stderr)
            newer = fake_wheel(os.path.join(tmp, "changed"), "2.11.0", "13.0.1", "py3-none-manylinux_2_28_x86_64",
                               stable=True)
            done = run(sb, api, "--tag", "v5.0.0", w_universal, newer)
            check("two builds of one variant (one label, one environment): refused before any request",
                  done.returncode == 6 and "could not resolve" in done.stderr and not assets_of(state, "v5.0.0"),
                  done.stdout + done.stderr)
        finally:
            stop()

        # 10. The client itself stopped (Ctrl-C, SIGKILL) while creating the release, listing the
        # assets or in the middle of an upload: no complete asset with wrong bytes, no temporary
        # copy left, and the next run completes.
        # Wheels sagebuild labels (into a temporary folder) before uploading them; the index
        # labels the same way, byte for byte, so its copies are what the release must hold.
        big = os.path.join(tmp, "big")
        os.makedirs(big)
        wheels = [fake_wheel(big, "2.9.0", "12.8.1", "cp312-cp312-manylinux_2_28_x86_64", padding=150_000),
                  fake_wheel(big, "2.10.0", "13.0.1", "py3-none-manylinux_2_28_x86_64", stable=True,
                             padding=150_000)]
        site = os.path.join(tmp, "site")
        subprocess.run([sb, "index", "--no-verify", big, "--out", site], check=True, capture_output=True)
        labelled = sorted(os.path.join(site, "wheels", f) for f in os.listdir(os.path.join(site, "wheels"))
                          if f.endswith(".whl"))
        state, stop = fake_github.start(TOKEN, REPO)
        try:
            api = state.api_base
            for n, (sig, method, pattern, kind, arg) in enumerate([
                (signal.SIGINT, "POST", r"/releases$", "stall", 3),
                (signal.SIGKILL, "GET", r"/assets$", "stall", 3),
                (signal.SIGINT, "POST", r"/assets$", "slow", None),
                (signal.SIGKILL, "POST", r"/assets$", "slow", None),
            ]):
                tag = f"v6.{n}.0"
                state.add_fault(method, pattern, kind, arg)
                # A TMPDIR of its own: other tests running beside this one (ctest -j) label
                # copies into the shared one.
                private = os.path.join(tmp, f"tmpdir-{n}")
                os.makedirs(private)
                proc = start(sb, api, "--tag", tag, "--timeout", "10", *wheels, tmpdir=private)
                time.sleep(1.0)
                proc.send_signal(sig)
                out, err = proc.communicate(timeout=60)
                outputs.append(out + err)
                assets = assets_of(state, tag)
                complete_and_wrong = [a["name"] for a in assets if a["state"] == "uploaded"
                                      and a["data"] != open(os.path.join(site, "wheels", a["name"]), "rb").read()]
                left = [f for f in os.listdir(private) if f.startswith("sagebuild-delivery")]
                stopped_ok = proc.returncode == (130 if sig == signal.SIGINT else -signal.SIGKILL)
                check(f"{sig.name} during {method} {pattern}: stopped ({proc.returncode}), no wrong asset"
                      + (", no labelled copy left behind" if sig == signal.SIGINT else ""),
                      stopped_ok and not complete_and_wrong and (sig != signal.SIGINT or not left),
                      f"{out}{err} assets {[(a['name'], a['state']) for a in assets]} left {left}")
                state.faults.clear()
                done = run(sb, api, "--tag", tag, *wheels)
                ok, why = consistent(state, tag, labelled)
                check(f"after {sig.name} during {method} {pattern}: the next run completes",
                      done.returncode == 0 and ok, why + done.stdout + done.stderr)
        finally:
            stop()

        # A killed run's labelled copies: removed by a later run once they are a day old.
        stale = os.path.join(tempfile.gettempdir(), "sagebuild-delivery-0000dead")
        fresh = os.path.join(tempfile.gettempdir(), "sagebuild-delivery-0000beef")
        for folder in (stale, fresh):
            os.makedirs(os.path.join(folder, "inside"), exist_ok=True)
        day_ago = time.time() - 2 * 86400
        os.utime(stale, (day_ago, day_ago))
        done = run(sb, "http://127.0.0.1:9", "--tag", "v8.0.0", "--dry-run", *wheels)
        check("a killed run's copies older than a day are removed, newer ones kept",
              done.returncode == 0 and not os.path.exists(stale) and os.path.exists(fresh),
              done.stdout + done.stderr)
        shutil.rmtree(fresh, ignore_errors=True)

        # 11. A full disk where the labelled copies are made: an error before any upload.
        tiny = os.path.join(tmp, "tiny")
        os.makedirs(tiny)
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", tiny],
                                 capture_output=True).returncode == 0
        if not mounted:
            print("skip a full disk under TMPDIR: this machine does not let the test mount a small tmpfs")
        else:
            state, stop = fake_github.start(TOKEN, REPO)
            try:
                env_before = os.environ.get("TMPDIR")
                os.environ["TMPDIR"] = tiny
                try:
                    done = run(sb, state.api_base, "--tag", "v7.0.0", *wheels)
                finally:
                    if env_before is None:
                        del os.environ["TMPDIR"]
                    else:
                        os.environ["TMPDIR"] = env_before
                check("a full disk for the labelled copies: exit 6 saying so, no request made",
                      done.returncode == 6 and "space" in done.stderr.lower() and not state.log
                      and not os.listdir(tiny), done.stdout + done.stderr + f"{state.log} {os.listdir(tiny)}")
            finally:
                stop()
                subprocess.run(["umount", tiny], capture_output=True)

    token_stays_home(sb)
    leaked = [i for i, text in enumerate(outputs) if TOKEN in text]
    check("the token appears in no output of any run", not leaked, f"runs {leaked}")
    return finish("release checks")


if __name__ == "__main__":
    sys.exit(main())
