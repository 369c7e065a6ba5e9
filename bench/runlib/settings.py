"""The daemon settings the bench configures and the method text states: the bench's own
overrides, else the daemon's default as its `cdc2doris config-reference` prints it."""
import re
import subprocess

# The variant of the 1,000-table run: delivery settings written into its
# config (and named in its figure labels and in the method text).
BUDGET_VARIANT = {"open_transaction_budget": 1000}
# Settings the method text states for each daemon run, with their values as
# configured: the bench's own overrides, else the daemon's default as its
# `cdc2doris config-reference` prints it (never a number remembered here).
# The emulator's delay before each Stream Load answer in the 1,000-table run
# "Doris answering slowly": a real BE flushes and pre-commits before it answers,
# the emulator (count-only) answers at once, which hides round trips per load.
SLOW_ANSWER_MS = 5
REPORTED_SETTINGS = ("open_transaction_budget", "memory_cap", "epoch_interval")


def delivery_yaml(settings):
    return "".join(f"  {k}: {v}\n" for k, v in settings.items())


def settings_label(settings):
    return ", ".join(f"{k} {v}" for k, v in settings.items())


def daemon_defaults(binary):
    """delivery.* defaults from `BINARY config-reference` (its Markdown table: | `key` | type | default | ... |)."""
    out = subprocess.run([binary, "config-reference"], capture_output=True, text=True, check=True).stdout
    defaults = dict(re.findall(r"^\|\s*`delivery\.([a-z_]+)`\s*\|[^|]*\|\s*([^|]*?)\s*\|", out, re.M))
    missing = [k for k in REPORTED_SETTINGS if k not in defaults]
    if missing:
        raise RuntimeError(f"{binary} config-reference lists no default for delivery.{', delivery.'.join(missing)}")
    return defaults


def daemon_settings_text(cfg, defaults, overrides):
    """'delivery.open_transaction_budget 800 (default), ...' for a run configured with these overrides."""
    configured = {"epoch_interval": cfg.epoch_interval, **overrides}
    parts = []
    for k in REPORTED_SETTINGS:
        if k in configured:
            parts.append(f"delivery.{k} {configured[k]}" + (" (default)" if str(configured[k]) == defaults[k] else ""))
        else:
            parts.append(f"delivery.{k} {defaults[k]} (default)")
    return ", ".join(parts)

