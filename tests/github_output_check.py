"""Reads back `sagebuild matrix --format github` output the way the GitHub Actions runner does.

The runner (actions/runner, FileCommandManager / SetOutputFileCommand) reads $GITHUB_OUTPUT line
by line: "name=value", or "name<<DELIMITER" followed by value lines up to a line equal to
DELIMITER. The matrix value must then be JSON with an "include" list, as `strategy.matrix`
expects from fromJSON().
"""
import json
import os
import subprocess
import sys
import tempfile


def parse_runner_file(text):
    outputs = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i].rstrip("\r")
        i += 1
        if not line:
            continue
        eq, heredoc = line.find("="), line.find("<<")
        if heredoc >= 0 and (eq < 0 or heredoc < eq):
            name, delimiter = line[:heredoc], line[heredoc + 2:]
            value = []
            while True:
                if i >= len(lines):
                    raise ValueError(f"unterminated heredoc for {name}")
                current = lines[i].rstrip("\r")
                i += 1
                if current == delimiter:
                    break
                value.append(current)
            outputs[name] = "\n".join(value)
        elif eq >= 0:
            outputs[line[:eq]] = line[eq + 1:]
        else:
            raise ValueError(f"invalid line: {line!r}")
    return outputs


def main():
    sagebuild, matrix = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "github_output")
        with open(path, "w") as f:
            f.write("earlier=kept\n")  # the file is shared by the whole step: append only
        env = dict(os.environ, GITHUB_OUTPUT=path)
        for profile, platform, count in [("sage2-all", "linux", 10), ("stable", "all", 6),
                                         ("default", "windows", 1)]:
            subprocess.run([sagebuild, "--matrix", matrix, "matrix", "--profile", profile,
                            "--platform", platform, "--format", "github"],
                           env=env, check=True, stdout=subprocess.DEVNULL)
            outputs = parse_runner_file(open(path).read())
            assert outputs["earlier"] == "kept", outputs
            doc = json.loads(outputs["matrix"])
            assert list(doc) == ["include"], doc.keys()
            assert len(doc["include"]) == count, (profile, len(doc["include"]))
            assert outputs["count"] == str(count)
            for entry in doc["include"]:
                assert all(isinstance(v, str) for v in entry.values()), entry
    print("github output: 3 profiles read back as the runner reads them")


if __name__ == "__main__":
    main()
