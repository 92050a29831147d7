"""Runs a GPU test file's tests without pytest (the GPU machine's python may lack it): one line a
test, exit status 1 when one fails, 0 with a SKIPPED line when the file's reason to skip is set."""

import sys


def run(namespace, why):
    if why is not None:
        print(f"SKIPPED: {why}")
        return 0
    failed = 0
    for name, fn in sorted(namespace.items()):
        if name.startswith("test_") and callable(fn):
            try:
                fn()
                print(f"PASSED {name}")
            except Exception as e:  # noqa: BLE001 - report and go on
                failed += 1
                print(f"FAILED {name}: {type(e).__name__}: {e}")
    print(f"{failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit("standalone.py is imported by the GPU test files, not run")
