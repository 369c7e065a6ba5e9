#!/usr/bin/env python3
"""deploy/kubernetes: schema validation with kubernetes-validate (the
Kubernetes OpenAPI schemas ship inside the PyPI package: offline), then the
cross-references a schema cannot see, then `cdc2doris check` on the config the
ConfigMap carries, with the environment the StatefulSet gives the container.

usage: kubernetes_validate.py REPO_ROOT CDC2DORIS_BINARY   (run with the venv's python)
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

import yaml

root, binary = sys.argv[1], sys.argv[2]
kdir = os.path.join(root, "deploy/kubernetes")
files = sorted(glob.glob(os.path.join(kdir, "*.yaml")))
errors = []
err = errors.append
if not files:
    sys.exit("FAIL: no manifests in deploy/kubernetes")

validator = os.path.join(os.path.dirname(sys.executable), "kubernetes-validate")
r = subprocess.run([validator, "--strict", "--no-warn", *files], capture_output=True, text=True)
print(r.stdout + r.stderr, end="")
if r.returncode != 0:
    err("kubernetes-validate rejected the manifests")
# Negative control: the validator rejects a malformed StatefulSet.
with tempfile.TemporaryDirectory() as tmp:
    bad = os.path.join(tmp, "bad.yaml")
    with open(bad, "w") as f:
        f.write("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: x}\nspec:\n  replicas: one\n")
    if subprocess.run([validator, "--strict", "--quiet", bad], capture_output=True).returncode == 0:
        err("kubernetes-validate accepted an invalid StatefulSet: the validator is not working")

docs = {}
for f in files:
    for d in yaml.safe_load_all(open(f)):
        if d:
            docs[d["kind"]] = d
for kind in ("StatefulSet", "ConfigMap", "Secret", "Service", "PodDisruptionBudget"):
    if kind not in docs:
        err(f"no {kind} in deploy/kubernetes")
if errors:
    print("\n".join("FAIL: " + e for e in errors))
    sys.exit(1)

sts, cm, secret, svc, pdb = (docs[k] for k in ("StatefulSet", "ConfigMap", "Secret", "Service", "PodDisruptionBudget"))
pod = sts["spec"]["template"]
labels = pod["metadata"]["labels"]
spec = pod["spec"]
c = spec["containers"][0]
cfg_text = cm["data"]["cdc2doris.yaml"]
cfg = yaml.safe_load(cfg_text)

def matches(selector):
    return all(labels.get(k) == v for k, v in selector.items())

if not matches(sts["spec"]["selector"]["matchLabels"]):
    err("StatefulSet selector does not match its pod labels")
if not matches(svc["spec"]["selector"]):
    err("Service selector does not match the pod labels")
if not matches(pdb["spec"]["selector"]["matchLabels"]):
    err("PodDisruptionBudget selector does not match the pod labels")
if sts["spec"]["serviceName"] != svc["metadata"]["name"]:
    err("StatefulSet serviceName is not the Service")

# Admin endpoint: listens on all interfaces at the container port the probes and the Service use.
listen = cfg.get("admin", {}).get("listen", "127.0.0.1:8080")
host, _, port = listen.rpartition(":")
if host not in ("0.0.0.0", "[::]", "::"):
    err(f"admin.listen {listen}: probes and Prometheus need 0.0.0.0")
ports = {p["name"]: p["containerPort"] for p in c["ports"]}
if int(port) not in ports.values():
    err(f"admin.listen port {port} is not a containerPort")
def probe(name, path):
    p = c.get(name)
    if not p:
        err(f"{name} is missing")
        return
    g = p["httpGet"]
    if g["path"] != path:
        err(f"{name} must GET {path}, gets {g['path']}")
    pp = ports.get(g["port"], g["port"])
    if str(pp) != port:
        err(f"{name} port {g['port']} is not admin.listen's {port}")
probe("readinessProbe", "/readyz")
probe("livenessProbe", "/healthz")
svc_port = svc["spec"]["ports"][0]
if str(ports.get(svc_port["targetPort"], svc_port["targetPort"])) != port:
    err("Service targetPort is not the admin port")
ann = svc["metadata"].get("annotations", {})
if ann.get("prometheus.io/scrape") != "true" or ann.get("prometheus.io/port") != port or ann.get("prometheus.io/path") != "/metrics":
    err("Service needs prometheus.io/scrape=true, prometheus.io/port=<admin port>, prometheus.io/path=/metrics")

# State directory on the PersistentVolume.
state_dir = cfg.get("state", {}).get("dir", "/var/lib/cdc2doris")
mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
claims = {t["metadata"]["name"] for t in sts["spec"].get("volumeClaimTemplates", [])}
if mounts.get(state_dir) not in claims:
    err(f"state.dir {state_dir} is not mounted from a volumeClaimTemplate")
config_path = next((a for a in c.get("args", []) if a.endswith(".yaml")), None)
if config_path not in mounts or mounts[config_path] not in {v["name"] for v in spec["volumes"] if "configMap" in v}:
    err(f"--config {config_path} is not mounted from the ConfigMap")

# Label prefix from the pod name via the downward API.
env = {e["name"]: e for e in c.get("env", [])}
# Identity from the pod name via the downward API: the instance id (static
# group membership) and, through it, the label prefix of each replica.
if str(cfg.get("kafka", {}).get("instance_id", "")) != "${POD_NAME}":
    err("kafka.instance_id must be ${POD_NAME}")
prefix = str(cfg.get("delivery", {}).get("label_prefix", ""))
if "{instance_id}" not in prefix and "${POD_NAME}" not in prefix:
    err("delivery.label_prefix must contain {instance_id} (or ${POD_NAME}): one prefix per replica")
if env.get("POD_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") != "metadata.name":
    err("POD_NAME must come from the downward API (fieldRef metadata.name)")
# Every ${VAR} without a default is provided; secretKeyRefs name existing keys.
secret_data = dict(secret.get("stringData", {}))
for var in re.findall(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", cfg_text):
    if var not in env:
        err(f"the config uses ${{{var}}} but the container does not set {var}")
for name, e in env.items():
    ref = e.get("valueFrom", {}).get("secretKeyRef")
    if ref and (ref["name"] != secret["metadata"]["name"] or ref["key"] not in secret_data):
        err(f"env {name} references secret key {ref['name']}/{ref['key']}, which secret.yaml does not define")
if "${DORIS_PASSWORD}" not in cfg_text:
    err("doris.password must be ${DORIS_PASSWORD} (from the Secret)")

# Shutdown: grace period above delivery.shutdown_deadline + the 10 s Kafka close.
def seconds(v):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m|h)?", str(v))
    return float(m.group(1)) * {"ms": 0.001, "s": 1, None: 1, "m": 60, "h": 3600}[m.group(2)]
deadline = seconds(cfg.get("delivery", {}).get("shutdown_deadline", "30s"))
if spec.get("terminationGracePeriodSeconds", 30) <= deadline + 10:
    err(f"terminationGracePeriodSeconds must exceed shutdown_deadline ({deadline:g}s) + 10s")

# Non-root and resources.
psc, csc = spec.get("securityContext", {}), c.get("securityContext", {})
if not psc.get("runAsNonRoot") or psc.get("runAsUser", 0) == 0:
    err("pod securityContext must be runAsNonRoot with a non-zero runAsUser")
if csc.get("allowPrivilegeEscalation") is not False or "ALL" not in csc.get("capabilities", {}).get("drop", []):
    err("container securityContext must disallow privilege escalation and drop ALL capabilities")
res = c.get("resources", {})
if "memory" not in res.get("limits", {}) or "cpu" not in res.get("requests", {}):
    err("container resources need a memory limit and a cpu request")
# Several replicas share the consumer group (docs/architecture.md,
# "Multi-instance protocol"); each has its own PVC, and the budget keeps all
# but one of them consuming through a drain.
replicas = sts["spec"].get("replicas", 1)
if replicas < 2:
    err("replicas must be > 1: a fail-over member in the group")
if not sts["spec"].get("volumeClaimTemplates"):
    err("each replica needs its own state PersistentVolumeClaim (volumeClaimTemplates)")
if pdb["spec"].get("maxUnavailable") != 1 and pdb["spec"].get("minAvailable", 0) < 1:
    err("the PodDisruptionBudget must keep all but one replica (maxUnavailable: 1)")

# The config itself, as the daemon will read it inside the pod.
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "cdc2doris.yaml")
    with open(path, "w") as f:
        f.write(cfg_text)
    run_env = dict(os.environ)
    for name, e in env.items():
        ref = e.get("valueFrom", {}).get("secretKeyRef")
        if "value" in e:
            run_env[name] = e["value"]
        elif ref:
            run_env[name] = secret_data[ref["key"]]
    run_env["POD_NAME"] = sts["metadata"]["name"] + "-0"
    r = subprocess.run([binary, "check", "--config", path], capture_output=True, text=True, env=run_env)
    print(r.stdout + r.stderr, end="")
    if r.returncode != 0:
        err(f"cdc2doris check rejected the ConfigMap's config (exit {r.returncode})")

if errors:
    print("\n".join("FAIL: " + e for e in errors))
    sys.exit(1)
print(f"Kubernetes manifests OK: {len(files)} files, {len(docs)} resources")
