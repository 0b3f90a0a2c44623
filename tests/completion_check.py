#!/usr/bin/env python3
"""The completion scripts, run by the real shells: `sagebuild completion bash` is sourced into
bash and its function called as bash calls it; `sagebuild completion zsh` is installed on
$fpath of an interactive zsh (under zpty, with compinit) and a Tab is typed. Each case checks
what the shell offers: commands, flags, fixed values, the profiles and entries of matrix.yaml
(asked of sagebuild at completion time), and nested commands (cache prune).

Usage: completion_check.py SAGEBUILD REPO
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklib import check, finish  # noqa: E402

# line typed so far -> what must be offered (all of it), and what must not be (any of it)
CASES = [
    ("sagebuild bu", ["build"], ["bake"]),
    ("sagebuild ca", ["cache"], []),
    ("sagebuild build --back", ["--backend"], []),
    ("sagebuild build --backend ", ["native", "docker"], ["--force"]),
    ("sagebuild build --profile st", ["stable"], []),
    ("sagebuild --matrix {repo}/matrix.yaml build --profile st", ["stable"], []),
    ("sagebuild -q build --entry linux-sage2-pytorch211-cu130-python31",
     ["linux-sage2-pytorch211-cu130-python310", "linux-sage2-pytorch211-cu130-python313"], []),
    ("sagebuild profiles --format ", ["table", "json"], ["github"]),
    ("sagebuild matrix --format ", ["table", "json", "github"], []),
    ("sagebuild cache ", ["list", "prune"], []),
    ("sagebuild cache prune --ol", ["--older-than"], []),
    ("sagebuild verify-wheel --sel", ["--select"], []),
    ("sagebuild completion ", ["bash", "zsh"], []),
    ("sagebuild --qu", ["--quiet"], []),
]

ZSH_HARNESS = r"""
# Completes $2 in an interactive zsh (under zpty) with the completion file in directory $1;
# prints each candidate zsh's completion system adds, one per line.
zmodload zsh/zpty
local out=$(mktemp)
zpty z zsh -f -i
zpty -w z "PROMPT=''; fpath=($1 \$fpath); autoload -U compinit; compinit -u -D"
zpty -w z "compadd() { local -a __hits; builtin compadd -O __hits \"\$@\"; print -rl -- \"\${__hits[@]}\" >> $out; builtin compadd \"\$@\"; }"
zpty -w z "bindkey '^I' complete-word"
zpty -w -n z "$2"$'\t'
local i
for i in {1..100}; do [[ -s $out ]] && break; sleep 0.1; done
sleep 0.3
zpty -d z
sort -u $out
rm -f $out
"""


def bash_offers(script, sagebuild, line):
    words = line.split(" ")
    words[0] = sagebuild
    program = (f"source {script}\n"
               f"COMP_WORDS=({' '.join(repr(w) for w in words)})\n"
               f"COMP_CWORD={len(words) - 1}\n"
               "_sagebuild 2>/dev/null\n"
               "printf '%s\\n' \"${COMPREPLY[@]}\"\n")
    done = subprocess.run(["bash", "--norc", "-c", program], capture_output=True, text=True,
                          timeout=60)
    return [w for w in done.stdout.splitlines() if w]


def zsh_offers(fpath, harness, sagebuild, line, env):
    done = subprocess.run(["zsh", "-f", harness, fpath, line], capture_output=True, text=True,
                          timeout=60, env=env)
    return [w for w in done.stdout.splitlines() if w]


def main():
    sagebuild, repo = os.path.abspath(sys.argv[1]), sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="sagebuild-completion-") as tmp:
        bash_script = os.path.join(tmp, "sagebuild.bash")
        with open(bash_script, "w") as f:
            f.write(subprocess.run([sagebuild, "completion", "bash"], capture_output=True,
                                   text=True, check=True).stdout)
        syntax = subprocess.run(["bash", "-n", bash_script], capture_output=True, text=True)
        check("the bash script parses", syntax.returncode == 0, syntax.stderr)
        for line, want, unwanted in CASES:
            line = line.format(repo=repo)
            got = bash_offers(bash_script, sagebuild, line)
            check(f"bash: '{line}' offers {', '.join(want)}",
                  all(w in got for w in want) and not any(u in got for u in unwanted),
                  f"offered {got}")

        zsh = shutil.which("zsh")
        if not zsh:
            check("zsh is installed (scripts/install-build-deps.sh installs it)", False)
            return finish("completion")
        fpath = os.path.join(tmp, "zfunc")
        os.makedirs(fpath)
        with open(os.path.join(fpath, "_sagebuild"), "w") as f:
            f.write(subprocess.run([sagebuild, "completion", "zsh"], capture_output=True,
                                   text=True, check=True).stdout)
        syntax = subprocess.run(["zsh", "-n", os.path.join(fpath, "_sagebuild")],
                                capture_output=True, text=True)
        check("the zsh script parses", syntax.returncode == 0, syntax.stderr)
        harness = os.path.join(tmp, "complete.zsh")
        with open(harness, "w") as f:
            f.write(ZSH_HARNESS)
        # The line says `sagebuild`: the binary under test comes first on PATH.
        env = dict(os.environ, PATH=os.path.dirname(sagebuild) + os.pathsep + os.environ["PATH"])
        for line, want, unwanted in CASES:
            line = line.format(repo=repo)
            got = zsh_offers(fpath, harness, sagebuild, line, env)
            check(f"zsh: '{line}' offers {', '.join(want)}",
                  all(w in got for w in want) and not any(u in got for u in unwanted),
                  f"offered {got}")
    return finish("completion")


if __name__ == "__main__":
    sys.exit(main())
