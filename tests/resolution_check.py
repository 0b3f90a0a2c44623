#!/usr/bin/env python3
"""Does every surface sagebuild delivers to resolve, with real pip and real uv, in environments
that already have torch? docs/build.md ("How pip and uv choose") gives the commands tested here.

The wheel set is the release's layout with more: one per-torch-py3 wheel (every Python) for
torch 2.6 (CUDA 12.6) and 2.9 (CUDA 12.8), the universal wheels for CUDA 12.8 and 13.0, and the
per-Python wheels of torch 2.11 (CUDA 13.0) that the native build makes (for the environments'
Python and 3.9), with the names, metadata and provenance sagebuild gives them (no binaries: what
is under test is the resolvers' choice). The surfaces: `sagebuild index`'s per-CUDA, per-variant
and combined indexes and its find-links page (the release's assets under the same names), served
by http.server on 127.0.0.1, and a real pypiserver after `sagebuild publish --local-labels`, with
PyPI as its fallback and without. The environments: venvs of the given Python holding a torch
distribution stand-in (its metadata, no files and no requirements, so that the resolver sees a
complete environment) of torch 2.6, 2.9, 2.10, 2.11 and the newest on PyPI.

For each (surface, environment, tool): the expected wheel is chosen, or the install fails with a
message that names the torch the surface's variants need ("torch>=2.10"); torch is never changed; PyPI's unrelated `sageattention` is never
chosen. And a fresh environment (no torch): where PyPI is reachable through the surface, the
highest variant and the torch it needs; through our indexes alone, a refusal naming torch. pip runs `install --dry-run --report`, uv `pip install --dry-run`: the resolution each
would install, nothing installed.

Usage: resolution_check.py SAGEBUILD PYTOOLS_BIN_DIR PYTHON (a CPython 3.10 or later)
"""
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

from checklib import check, fake_wheel, finish, free_port

PER_TORCH = [("2.6.0", "12.6.1", "cu126torch2.6"), ("2.9.0", "12.8.1", "cu128torch2.9"),
             ("2.11.0", "13.0.1", "cu130torch2.11")]
UNIVERSAL = [("12.8.1", "cu128"), ("13.0.1", "cu130")]


def wheel_set(directory, env_tag):
    for torch, cuda, _ in PER_TORCH:
        if torch == "2.11.0":
            for python in sorted({"cp39", env_tag}):
                fake_wheel(directory, torch, cuda, f"{python}-{python}-manylinux_2_28_x86_64")
        else:
            fake_wheel(directory, torch, cuda, "py3-none-manylinux_2_28_x86_64")
    for cuda, _ in UNIVERSAL:
        fake_wheel(directory, "2.10.0", cuda, "py3-none-manylinux_2_28_x86_64", stable=True)


def torch_env(root, python, torch):
    """A venv whose site-packages holds torch's metadata (and nothing else of torch); with torch
    None, a fresh venv (a first install)."""
    env = os.path.join(root, f"torch-{torch or 'none'}")
    subprocess.run([python, "-m", "venv", "--without-pip", env], check=True)
    if torch is None:
        return os.path.join(env, "bin", "python")
    site = subprocess.run([os.path.join(env, "bin", "python"), "-c",
                           "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    dist = os.path.join(site, f"torch-{torch}.dist-info")
    os.makedirs(dist)
    with open(os.path.join(dist, "METADATA"), "w") as f:
        f.write(f"Metadata-Version: 2.1\nName: torch\nVersion: {torch}\n")
    for name, text in (("INSTALLER", "pip\n"), ("RECORD", "")):
        with open(os.path.join(dist, name), "w") as f:
            f.write(text)
    return os.path.join(env, "bin", "python")


def expected(surface, torch):
    """The label of the wheel the resolvers must choose, or None: the install must fail. torch:
    the environment's, or for a fresh one the torch the resolver installs with it."""
    minor = tuple(int(x) for x in torch.split(".")[:2])
    universal_ok = minor >= (2, 10)
    if surface == "cu13":  # universal CUDA 13 wheel; per-torch wheels older than 2.10 of CUDA 13: none
        return "cu130" if universal_ok else None
    if surface == "cu12":
        return {(2, 6): "cu126torch2.6", (2, 9): "cu128torch2.9"}.get(minor, "cu128" if universal_ok else None)
    if surface == "cu128torch2.9":
        return "cu128torch2.9" if minor == (2, 9) else None
    # The combined surfaces: the highest version whose torch requirement the installed torch
    # meets. They leave out torch 2.11's per-torch wheels (the universal wheels serve 2.11 with
    # every CUDA build), so PEP 440's order cu130 > cu128torch2.9 > cu128 > cu126torch2.6 decides.
    return {(2, 6): "cu126torch2.6", (2, 9): "cu128torch2.9"}.get(minor, "cu130" if universal_ok else None)


def fresh_choice(newest_torch):
    """(label, torch) a resolver picks with no torch installed and PyPI reachable, on cu13 and
    the combined surfaces alike: the highest version label (the universal CUDA 13 wheel), then
    the torch it needs, the newest."""
    return ("cu130", newest_torch)


# A torch from PyTorch's index for one CUDA build, and what `<site>/<its suffix>/simple` must
# give it: the wheel whose kernels load with it (every wheel of one CUDA major does; the
# universal one carries its runtime), or None: no index there (no CPU build of the kernels).
# The combined surfaces cannot tell these torches from PyPI's and give each the universal CUDA
# 13 wheel, whose own runtime loads with any CUDA build of torch (a CUDA 12 driver or a CPU torch
# is then named at import, with the index that fits: sageattention._diagnose).
FLAVOURED = [("2.11.0+cu126", "cu126", "cu128"), ("2.11.0+cu128", "cu128", "cu128"),
             ("2.11.0+cu130", "cu130", "cu130"), ("2.11.0+cpu", "cpu", None)]
COMBINED_FLAVOURED = "cu130"

# The driver's CUDA version uv's NVIDIA variant provider is told, and the variant uv must install
# from <site>/variants/simple: the newest CUDA that driver runs, or None: a refusal.
DRIVERS = [("12.4", "cu128"), ("13.0", "cu130"), ("13.2", "cu130"), ("11.8", None)]


def uv_install_variant(pytools, python, index, driver, cache):
    """Installs sageattention from a variants index with uv's wheel variants on, as on a machine
    whose driver runs CUDA `driver`; returns (the installed variant's label or None, output)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "NV_VARIANT"))}
    env.update(UV_CACHE_DIR=cache, NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION=driver)
    done = subprocess.run([os.path.join(pytools, "uv"), "pip", "install", "--python", python,
                           "--preview-features", "wheel-variants", "--index-url", index, "sageattention"],
                          capture_output=True, text=True, timeout=600, env=env)
    text = done.stdout + done.stderr
    if done.returncode != 0:
        return None, text
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    found = [d for d in os.listdir(site) if d.startswith("sageattention-") and d.endswith(".dist-info")]
    try:
        with open(os.path.join(site, found[0], "variant.json")) as f:
            return sorted(json.load(f)["variants"]), text
    except (IndexError, OSError, ValueError, KeyError) as e:
        return None, f"{text}\n{e}"


def wait_for(url):
    for _ in range(100):  # bounded: ten seconds
        try:
            urllib.request.urlopen(url, timeout=1)
            return True
        except OSError:
            time.sleep(0.1)
    return False


def pip_resolve(pytools, python, args, report):
    done = subprocess.run([os.path.join(pytools, "python"), "-m", "pip", "--python", python, "install",
                           "--dry-run", "--no-cache-dir", "--disable-pip-version-check", "--report", report,
                           *args], capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        return None, done.stdout + done.stderr
    with open(report) as f:
        installs = json.load(f)["install"]
    return {i["metadata"]["name"].lower(): i["metadata"]["version"] for i in installs}, done.stdout + done.stderr


def uv_resolve(pytools, python, args, cache):
    env = {k: v for k, v in os.environ.items() if not k.startswith("UV_")}
    env["UV_CACHE_DIR"] = cache
    done = subprocess.run([os.path.join(pytools, "uv"), "pip", "install", "--python", python, "--dry-run",
                           *args], capture_output=True, text=True, timeout=600, env=env)
    text = done.stdout + done.stderr
    if done.returncode != 0:
        return None, text
    # " + sageattention==2.2.0+cu130", " - torch==2.15.0"
    changes = {}
    for sign, name, version in re.findall(r"^ ([+-]) ([A-Za-z0-9_.-]+)==(\S+)", text, re.M):
        if sign == "+":
            changes[name.lower()] = version
        else:
            changes.setdefault(name.lower(), "removed")
    return changes, text


def main():
    sagebuild, pytools, python = sys.argv[1:4]
    newest = subprocess.run([os.path.join(pytools, "python"), "-m", "pip", "index", "versions", "torch",
                             "--disable-pip-version-check"], capture_output=True, text=True, timeout=300)
    found = re.search(r"^torch \(([0-9.]+)\)", newest.stdout, re.M)
    check("the newest torch on PyPI is known (PyPI reachable)", found is not None, newest.stdout + newest.stderr)
    newest_torch = found.group(1) if found else None
    torches = ["2.6.0", "2.9.1", "2.10.0", "2.11.0"] + ([newest_torch] if found else []) + [None]
    with tempfile.TemporaryDirectory() as tmp:
        dist = os.path.join(tmp, "dist")
        os.makedirs(dist)
        env_tag = subprocess.run([python, "-c", "import sys; print(f'cp3{sys.version_info[1]}')"],
                                 capture_output=True, text=True, check=True).stdout.strip()
        wheel_set(dist, env_tag)
        site = os.path.join(tmp, "site")
        done = subprocess.run([sagebuild, "index", "--no-verify", dist, "--out", site], capture_output=True, text=True)
        check("sagebuild index writes the site", done.returncode == 0, done.stdout + done.stderr)
        release = subprocess.run([sagebuild, "release", "--dry-run", "--no-verify", "--tag", "v2.2.0",
                                  *sorted(os.path.join(dist, f) for f in os.listdir(dist))],
                                 capture_output=True, text=True)
        attached = sorted(re.findall(r"would attach (\S+)", release.stdout))
        with open(os.path.join(site, "wheels", "index.html")) as f:
            served = sorted(set(re.findall(r">([^<>]+\.whl)<", f.read())))
        check("the release's assets are the files the find-links page lists", release.returncode == 0
              and attached == served, f"{attached}\n{served}\n{release.stderr}")
        # Torch 2.11's per-torch wheels are left out of the combined surfaces, each named.
        for out in (done.stdout + done.stderr, release.stdout + release.stderr):
            check("index and release name each per-torch wheel a universal one serves",
                  len(re.findall(r"cu130torch2\.11-\S+ is for the per-CUDA indexes only", out)) == 2
                  and not any("torch2.11" in f for f in served), out)

        envs = {torch: torch_env(os.path.join(tmp, "envs"), python, torch) for torch in torches}
        flavoured_envs = {torch: torch_env(os.path.join(tmp, "envs"), python, torch) for torch, _, _ in FLAVOURED}
        packages = os.path.join(tmp, "packages")
        os.makedirs(packages)
        http_port, registry_port, fallback_port = free_port(), free_port(), free_port()
        servers = [
            subprocess.Popen([sys.executable, "-m", "http.server", str(http_port), "--bind", "127.0.0.1",
                              "--directory", site], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
            subprocess.Popen([os.path.join(pytools, "pypi-server"), "run", "-p", str(registry_port), "-i",
                              "127.0.0.1", "-a", ".", "-P", ".", "--disable-fallback", packages],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
            # The same packages with pypiserver's default fallback: projects it lacks go to PyPI.
            subprocess.Popen([os.path.join(pytools, "pypi-server"), "run", "-p", str(fallback_port), "-i",
                              "127.0.0.1", "-a", ".", "-P", ".", packages],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
        ]
        try:
            site_url = f"http://127.0.0.1:{http_port}"
            registry = f"http://127.0.0.1:{registry_port}"
            fallback = f"http://127.0.0.1:{fallback_port}"
            ready = all(wait_for(u + "/") for u in (site_url, registry, fallback))
            check("the servers answer", ready)
            done = subprocess.run([sagebuild, "publish", "--no-verify", "--local-labels", "--repository-url",
                                   registry + "/", *sorted(os.path.join(dist, f) for f in os.listdir(dist))],
                                  capture_output=True, text=True, timeout=300)
            check("sagebuild publish --local-labels uploads the set", done.returncode == 0
                  and sorted(os.listdir(packages)) == served, done.stdout + done.stderr)

            # (surface, what its expectations are called, pip args, uv args); `pin`: the
            # installed torch is named too (PyPI is reachable through the surface), as the
            # documented one-liner does: `torch==<version>` where torch is installed, nothing in a
            # fresh environment (docs/build.md, "Torch out of reach").
            surfaces = []
            for name in ("cu13", "cu12", "cu128torch2.9"):
                url = f"{site_url}/{name}/simple/"
                surfaces.append((f"{name}/simple", name, ["--index-url", url], ["--index-url", url], False))
            url = f"{site_url}/simple/"
            surfaces.append(("simple/ (combined)", "all", ["--index-url", url], ["--index-url", url], False))
            links = f"{site_url}/wheels/"
            surfaces.append(("release assets (--find-links)", "all", ["--no-index", "--find-links", links],
                             ["--no-index", "--find-links", links], False))
            surfaces.append(("pypiserver", "all", ["--index-url", registry + "/simple/"],
                             ["--index-url", registry + "/simple/"], False))
            surfaces.append(("pypiserver with PyPI fallback", "all", ["--index-url", fallback + "/simple/"],
                             ["--index-url", fallback + "/simple/"], True))
            # uv's --index puts ours before PyPI (first-index: sageattention only from ours).
            surfaces.append(("cu13/simple with PyPI (uv --index)", "cu13", None,
                             ["--index", f"{site_url}/cu13/simple/"], True))

            jobs = []
            for surface, rules, pip_args, uv_args, pin in surfaces:
                for torch, env in envs.items():
                    requirement = ["sageattention"] + ([f"torch=={torch}"] if pin and torch else [])
                    # A fresh environment: where PyPI is reachable the resolver takes the highest
                    # version label and the torch it needs (fresh_choice); our indexes alone have
                    # no torch.
                    want = expected(rules, torch) if torch else fresh_choice(newest_torch) if pin else None
                    if pip_args is not None:
                        jobs.append((surface, torch, "pip", want,
                                     lambda env=env, a=pip_args, r=requirement, k=len(jobs):
                                     pip_resolve(pytools, env, a + r, os.path.join(tmp, f"report{k}.json"))))
                    jobs.append((surface, torch, "uv", want,
                                 lambda env=env, a=uv_args, r=requirement, k=len(jobs):
                                 uv_resolve(pytools, env, a + r, os.path.join(tmp, f"uv-cache{k}"))))
            # A torch from PyTorch's index for one CUDA build, through the index of its suffix.
            for torch, suffix, want in FLAVOURED:
                url = f"{site_url}/{suffix}/simple/"
                for tool, run in (("pip", lambda env=flavoured_envs[torch], u=url, k=len(jobs): pip_resolve(
                                      pytools, env, ["--index-url", u, "sageattention"], os.path.join(tmp, f"report{k}.json"))),
                                  ("uv", lambda env=flavoured_envs[torch], u=url, k=len(jobs): uv_resolve(
                                      pytools, env, ["--index-url", u, "sageattention"], os.path.join(tmp, f"uv-cache{k}")))):
                    jobs.append((f"{suffix}/simple (its suffix)", torch, tool, want or "no-index", run))
            # The same torches through the combined surfaces (no pin: PyPI is out of reach there).
            for torch, _, _ in FLAVOURED:
                for surface, rules, pip_args, uv_args, pin in surfaces:
                    if rules != "all" or pin:
                        continue
                    env = flavoured_envs[torch]
                    jobs.append((surface, torch, "pip", COMBINED_FLAVOURED,
                                 lambda env=env, a=pip_args, k=len(jobs): pip_resolve(
                                     pytools, env, a + ["sageattention"], os.path.join(tmp, f"report{k}.json"))))
                    jobs.append((surface, torch, "uv", COMBINED_FLAVOURED,
                                 lambda env=env, a=uv_args, k=len(jobs): uv_resolve(
                                     pytools, env, a + ["sageattention"], os.path.join(tmp, f"uv-cache{k}"))))
            with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
                results = list(pool.map(lambda job: job[4](), jobs))
            for (surface, torch, tool, want, _), (changes, text) in zip(jobs, results):
                name = f"{tool}, torch {torch or 'none (a fresh environment)'}, {surface}: "
                if want == "no-index":
                    # pip: "from versions: none"; uv: "not found in the package registry".
                    check(name + "fails: no index serves this torch", changes is None
                          and re.search(r"versions: none|not found in the package registry", text) is not None,
                          f"{changes}\n{text[-600:]}")
                    continue
                if torch is None and want is None:
                    # pip: "No matching distribution found for torch>=2.10"; uv: "torch was not
                    # found in the package registry": the fix is to install torch first.
                    check(name + "fails, naming torch",
                          changes is None and "torch" in text.lower(), f"{changes}\n{text[-600:]}")
                    continue
                if torch is None:
                    label, wanted_torch = want
                    got = (changes or {}).get("sageattention", "")
                    check(name + f"2.2.0+{label} with torch {wanted_torch}",
                          got == f"2.2.0+{label}" and (changes or {}).get("torch", "").startswith(wanted_torch),
                          f"{changes}\n{text[-600:]}")
                    continue
                if want is None:
                    # pip: "No matching distribution found for torch>=2.10 (from sageattention)";
                    # uv: "sageattention==2.2.0+cu130 depends on torch>=2.10": the torch the
                    # surface's variants need.
                    check(name + "fails, naming the torch its variants need",
                          changes is None and re.search(r"torch ?(==|>=)\s?\d", text) is not None,
                          f"{changes}\n{text[-600:]}")
                    continue
                got = (changes or {}).get("sageattention", "")
                others = sorted(k for k in (changes or {}) if k != "sageattention")
                check(name + f"2.2.0+{want}, nothing else changed",
                      got == f"2.2.0+{want}" and not others, f"{changes}\n{text[-600:]}")

            # Wheel variants: one index, one version, the wheel chosen by the machine's driver.
            variants = f"{site_url}/variants/simple/"
            for driver, want in DRIVERS:
                env = torch_env(os.path.join(tmp, f"variant-envs-{driver}"), python, "2.11.0")
                got, text = uv_install_variant(pytools, env, variants, driver, os.path.join(tmp, f"uv-variant-{driver}"))
                if want is None:
                    check(f"uv, a driver for CUDA {driver}, variants/simple: refuses (no variant fits)",
                          got is None and "unsupported wheel variants" in text, f"{got}\n{text[-600:]}")
                else:
                    check(f"uv, a driver for CUDA {driver}, variants/simple: installs the {want} variant",
                          got == [want], f"{got}\n{text[-600:]}")
            changes, text = pip_resolve(pytools, envs["2.11.0"], ["--index-url", variants, "sageattention"],
                                        os.path.join(tmp, "report-variants.json"))
            check("pip, variants/simple: takes no variant wheel (it has no variant support)",
                  changes is None and "versions: none" in text, f"{changes}\n{text[-600:]}")
        finally:
            for server in servers:
                server.terminate()
                server.wait(timeout=30)
            shutil.rmtree(os.path.join(tmp, "envs"), ignore_errors=True)
    return finish("resolution checks")


if __name__ == "__main__":
    sys.exit(main())
