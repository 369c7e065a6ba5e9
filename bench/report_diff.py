#!/usr/bin/env python3
"""Renders bench reports from their JSON with bench/run as it is at a git revision and
as it is in the working tree, and diffs the Markdown: a change to the driver that
should not change the report shows no difference (exit 0), one that should shows
exactly what it changes (exit 1).

usage: bench/report_diff.py [--base REV] [JSON ...]   (default: main, every bench/results/*.json)
"""
import argparse
import difflib
import glob
import io
import os
import subprocess
import sys
import tarfile
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RENDER = os.path.join(ROOT, "bench", "render_report.py")


def render(tree, json_path, out_path):
    # A child per tree: each tree's bench/run imports its own bench/runlib.
    subprocess.run([sys.executable, RENDER, os.path.join(tree, "bench", "run"), json_path, out_path], check=True)
    with open(out_path) as f:
        return f.read().splitlines(keepends=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", default="main")
    ap.add_argument("json", nargs="*")
    args = ap.parse_args()
    paths = args.json or sorted(glob.glob(os.path.join(ROOT, "bench", "results", "*.json")))
    differ = 0
    with tempfile.TemporaryDirectory() as tmp:
        base_tree = os.path.join(tmp, "base")
        archive = subprocess.run(["git", "-C", ROOT, "archive", args.base, "bench"], capture_output=True, check=True)
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as t:
            t.extractall(base_tree, filter="data")
        for p in paths:
            old = render(base_tree, p, os.path.join(tmp, "old.md"))
            new = render(ROOT, p, os.path.join(tmp, "new.md"))
            name = os.path.relpath(p, ROOT)
            if old == new:
                print(f"same: {name}")
                continue
            differ += 1
            sys.stdout.writelines(difflib.unified_diff(old, new, f"{name} at {args.base}", f"{name} now"))
    print(f"{len(paths) - differ} of {len(paths)} reports render the same")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
