#!/usr/bin/env python3
"""Renders a bench report's Markdown from its JSON with a given bench/run script (this
tree's or another revision's), as bench/run itself writes it after a run.

usage: render_report.py BENCH_RUN JSON OUT_MD
"""
import importlib.machinery
import importlib.util
import json
import sys

run_script, json_path, out_path = sys.argv[1:4]
# bench/run has no .py suffix: load it by path; it adds its own folder (and runlib) to sys.path.
loader = importlib.machinery.SourceFileLoader("bench_run", run_script)
run = importlib.util.module_from_spec(importlib.util.spec_from_loader("bench_run", loader))
loader.exec_module(run)
with open(json_path) as f:
    res = json.load(f)
run.write_markdown(out_path, res, run.build_table(res))
