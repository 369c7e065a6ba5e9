#!/usr/bin/env python3
"""deploy/grafana/cdc2doris-dashboard.json: valid JSON with the panels the
operations guide promises, unique ids, a Prometheus datasource variable, and
every query valid PromQL: the queries (Grafana variables replaced) are written
as recording rules and checked by `promtool check rules`.

usage: grafana_dashboard.py REPO_ROOT
"""
import json
import os
import subprocess
import sys
import tempfile

root = sys.argv[1]
d = json.load(open(os.path.join(root, "deploy/grafana/cdc2doris-dashboard.json")))
errors = []
err = errors.append

panels = d.get("panels", [])
ids = [p["id"] for p in panels]
if len(ids) != len(set(ids)):
    err("panel ids are not unique")
if not any(v.get("type") == "datasource" and v.get("query") == "prometheus" for v in d["templating"]["list"]):
    err("no Prometheus datasource variable")
exprs = []
for p in panels:
    if p["type"] == "row":
        continue
    if "gridPos" not in p or p.get("datasource", {}).get("uid") != "${datasource}":
        err(f"panel {p['title']!r}: needs gridPos and the ${{datasource}} variable")
    if not p.get("targets"):
        err(f"panel {p['title']!r} has no query")
    for t in p.get("targets", []):
        exprs.append((p["title"], t["expr"]))
all_text = " ".join(e for _, e in exprs)
# What docs/operations.md and issue 7 promise on the dashboard.
for needle, what in [("cdc2doris_rows_loaded_total", "rows/s per table"),
                     ("cdc2doris_consumer_lag_records", "lag per partition"),
                     ("histogram_quantile(0.5, sum by (le) (rate(cdc2doris_epoch_commit_duration_seconds_bucket", "commit latency p50"),
                     ("histogram_quantile(0.99, sum by (le) (rate(cdc2doris_epoch_commit_duration_seconds_bucket", "commit latency p99"),
                     ("cdc2doris_epochs_committed_total", "epochs committed"),
                     ("cdc2doris_epochs_aborted_total", "epochs aborted"),
                     ("cdc2doris_epochs_replayed_total", "epochs replayed"),
                     ("sum by (reason) (increase(cdc2doris_rewinds_total", "rewinds by reason"),
                     ("cdc2doris_bad_records_total", "bad records"),
                     ("cdc2doris_doris_errors_total", "Doris errors"),
                     ("cdc2doris_buffered_bytes", "buffered bytes")]:
    if needle not in all_text:
        err(f"dashboard lacks {what} ({needle})")

with tempfile.TemporaryDirectory() as tmp:
    rules = os.path.join(tmp, "dashboard-queries.yaml")
    with open(rules, "w") as f:
        f.write("groups:\n  - name: dashboard\n    rules:\n")
        for i, (title, e) in enumerate(exprs):
            q = (e.replace("$__rate_interval_ms", "300000").replace("$__rate_interval", "5m")
                  .replace("$instance", ".*"))
            f.write(f"      - record: dashboard:query_{i}\n        expr: {json.dumps(q)}\n")
    r = subprocess.run(["promtool", "check", "rules", rules], capture_output=True, text=True)
    if r.returncode != 0:
        err("promtool rejected a dashboard query:\n" + r.stdout + r.stderr)

if errors:
    print("\n".join("FAIL: " + e for e in errors))
    sys.exit(1)
print(f"dashboard OK: {len(panels)} panels, {len(exprs)} queries valid PromQL")
