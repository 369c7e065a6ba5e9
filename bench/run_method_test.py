#!/usr/bin/env python3
"""bench/run's Method text states the daemon settings actually used (issue 19
item 3): the defaults as the daemon binary's `config-reference` prints them and
the bench's own overrides, never numbers remembered in bench/run.

usage: run_method_test.py REPO_ROOT DAEMON_BINARY
"""
import os
import re
import subprocess
import sys
import tempfile

root, daemon = sys.argv[1], sys.argv[2]
run = os.path.join(root, "bench", "run")
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)


def method(binary, *extra):
    return subprocess.run([sys.executable, run, "--print-method", "--daemon", binary, *extra],
                          capture_output=True, text=True)


# The real binary: its own default, read here independently of bench/run.
ref = subprocess.run([daemon, "config-reference"], capture_output=True, text=True, check=True).stdout
m = re.search(r"`delivery\.open_transaction_budget`\s*\|[^|]*\|\s*(\d+)\s*\|", ref)
check(m is not None, "config-reference has no delivery.open_transaction_budget row")
default_budget = m.group(1) if m else "?"
r = method(daemon, "--epoch-interval", "3s")
check(r.returncode == 0, f"--print-method failed: {r.stderr}")
text = r.stdout
check(text.count(f"delivery.open_transaction_budget {default_budget} (default)") == 2,
      f"the 8-table and 1,000-table runs do not both state the default budget {default_budget}")
check("delivery.open_transaction_budget 1000," in text and "variant 'open_transaction_budget 1000'" in text,
      "the budget variant's setting is not stated")
stated = set(re.findall(r"open_transaction_budget (\d+)", text))
check(stated <= {default_budget, "1000"}, f"budgets stated that no run uses: {stated - {default_budget, '1000'}}")
check("delivery.epoch_interval 3s" in text and "delivery.epoch_interval 3s (default)" not in text,
      "the --epoch-interval given is not stated as configured")

with tempfile.TemporaryDirectory() as tmp:
    # A daemon whose defaults differ: the text follows it.
    fake = os.path.join(tmp, "cdc2doris")
    with open(fake, "w") as f:
        f.write("#!/bin/sh\ncat <<'EOF'\n| key | type | default | meaning |\n|---|---|---|---|\n"
                "| `delivery.epoch_interval` | duration | 7s | x |\n"
                "| `delivery.memory_cap` | size | 64MiB | x |\n"
                "| `delivery.open_transaction_budget` | integer | 123 | x |\nEOF\n")
    os.chmod(fake, 0o755)
    r = method(fake, "--epoch-interval", "7s")
    check(r.returncode == 0, f"--print-method with the fake daemon failed: {r.stderr}")
    check(r.stdout.count("delivery.open_transaction_budget 123 (default)") == 2, "the fake daemon's budget 123 is not stated")
    check("delivery.memory_cap 64MiB (default)" in r.stdout, "the fake daemon's memory_cap is not stated")
    check("delivery.epoch_interval 7s (default)" in r.stdout, "an override equal to the default is not marked (default)")
    check(default_budget == "123" or f"open_transaction_budget {default_budget} " not in r.stdout,
          "the real daemon's default leaked into the fake daemon's text")
    # A daemon that no longer documents a setting: a loud failure, not a stale sentence.
    with open(fake, "w") as f:
        f.write("#!/bin/sh\necho '| `delivery.epoch_interval` | duration | 7s | x |'\n")
    r = method(fake)
    check(r.returncode != 0 and "open_transaction_budget" in r.stderr,
          f"a missing default was not reported (rc {r.returncode}): {r.stderr[-300:]}")

for f in failures:
    print("FAIL:", f)
if failures:
    sys.exit(1)
print(f"bench/run method text OK (default open_transaction_budget {default_budget})")
