"""What the end-to-end check scripts share: named checks that print ok/FAIL with detail and are
counted for the exit status, and a free loopback port for the servers they start."""
import socket

failures = []


def check(name, condition, detail=""):
    print(("ok   " if condition else "FAIL ") + name)
    if not condition:
        failures.append(name)
        if detail:
            print("     " + detail.replace("\n", "\n     "))


def finish(what):
    """Prints the tally; returns the exit status."""
    print(f"{what}: {len(failures)} failed")
    return 1 if failures else 0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
