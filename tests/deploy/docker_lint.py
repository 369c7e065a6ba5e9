#!/usr/bin/env python3
"""Offline checks of deploy/docker/Dockerfile (no Docker engine, no hadolint):

* every stage is FROM debian:bookworm-slim; the build stage runs the project's
  own scripts (scripts/setup, the `release` preset of CMakePresets.json);
* every COPY source exists in the repository and is not excluded by
  Dockerfile.dockerignore; every COPY --from names an earlier stage;
* the runtime stage installs a Debian package for every shared library the
  built binary needs (readelf NEEDED -> ldd path -> dpkg -S package), and the
  package names exist in the apt cache when it has lists;
* non-root USER, VOLUME /var/lib/cdc2doris, HEALTHCHECK on /healthz,
  ENTRYPOINT ["cdc2doris"], CMD run --config /etc/cdc2doris/cdc2doris.yaml.

usage: docker_lint.py REPO_ROOT BUILT_BINARY
"""
import fnmatch
import json
import os
import re
import shlex
import subprocess
import sys

root, binary = sys.argv[1], sys.argv[2]
dockerfile = os.path.join(root, "deploy/docker/Dockerfile")
ignorefile = os.path.join(root, "deploy/docker/Dockerfile.dockerignore")
errors = []


def err(msg):
    errors.append(msg)


# ---- parse: join continuation lines, drop comments
instructions = []
with open(dockerfile) as f:
    buf = ""
    for raw in f:
        line = raw.rstrip("\n")
        if not buf and (line.strip().startswith("#") or not line.strip()):
            continue
        if line.strip().startswith("#"):
            continue
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        buf += line
        word, _, rest = buf.strip().partition(" ")
        instructions.append((word.upper(), rest.strip()))
        buf = ""

stages = []  # (name, [(instr, args)])
for ins, args in instructions:
    if ins == "FROM":
        parts = args.split()
        name = parts[2] if len(parts) >= 3 and parts[1].upper() == "AS" else None
        if parts[0] != "debian:bookworm-slim":
            err(f"FROM {parts[0]}: every stage must be debian:bookworm-slim")
        stages.append((name, []))
    elif not stages:
        if ins != "ARG":
            err(f"{ins} before the first FROM")
    else:
        stages[-1][1].append((ins, args))

if len(stages) < 2:
    err("expected a multi-stage build (build + runtime)")
build_stage, runtime_stage = stages[0][1], stages[-1][1]

# ---- the build stage runs the same scripts as CI
build_runs = " ".join(a for i, a in build_stage if i == "RUN")
if "scripts/setup" not in build_runs:
    err("the build stage must run scripts/setup (as CI does)")
presets = json.load(open(os.path.join(root, "CMakePresets.json")))
m = re.search(r"cmake --preset (\S+)", build_runs)
if not m:
    err("the build stage must configure with a CMake preset")
else:
    names = {p["name"] for p in presets["configurePresets"]}
    if m.group(1) != "release" or m.group(1) not in names:
        err(f"configure preset {m.group(1)!r} must be 'release' from CMakePresets.json")
if not re.search(r"cmake --build --preset release\b", build_runs):
    err("the build stage must build with --preset release")
for script in re.findall(r"(?<![\w/.-])(scripts/[\w./-]+)", build_runs):
    p = os.path.join(root, script)
    if not (os.path.isfile(p) and os.access(p, os.X_OK)):
        err(f"RUN calls {script}, which is not an executable file in the repository")
ci = os.path.join(root, ".ci/run")
if os.path.exists(ci) and "scripts/test" in open(ci).read():
    if "scripts/setup" not in open(os.path.join(root, "scripts/test")).read():
        err("CI (scripts/test) no longer runs scripts/setup: keep the Dockerfile in step")

# ---- COPY sources exist and are in the build context
patterns = []
if os.path.exists(ignorefile):
    for line in open(ignorefile):
        line = line.strip()
        if line and not line.startswith("#"):
            patterns.append(line.rstrip("/"))
else:
    err("deploy/docker/Dockerfile.dockerignore is missing")


def ignored(rel):
    parts = rel.split("/")
    for pat in patterns:
        for i in range(1, len(parts) + 1):
            prefix = "/".join(parts[:i])
            if fnmatch.fnmatch(prefix, pat) or fnmatch.fnmatch(prefix, pat.replace("**/", "")):
                return pat
    return None


stage_names = []
copies = 0
for name, body in stages:
    for ins, args in body:
        if ins not in ("COPY", "ADD"):
            continue
        if ins == "ADD":
            err("use COPY, not ADD")
        words = shlex.split(args)
        flags = [w for w in words if w.startswith("--")]
        paths = [w for w in words if not w.startswith("--")]
        src, dst = paths[:-1], paths[-1]
        frm = [f.split("=", 1)[1] for f in flags if f.startswith("--from=")]
        if frm:
            if frm[0] not in stage_names:
                err(f"COPY --from={frm[0]}: no earlier stage of that name")
            continue
        for s in src:
            copies += 1
            rel = os.path.normpath(s).lstrip("./") if s not in (".", "./") else "."
            if rel != "." and not os.path.exists(os.path.join(root, rel)):
                err(f"COPY source {s} does not exist in the repository")
            elif rel != "." and ignored(rel):
                err(f"COPY source {s} is excluded by Dockerfile.dockerignore ({ignored(rel)})")
        if len(src) > 1 and not dst.endswith("/"):
            err(f"COPY of several sources needs a directory destination ending in '/': {args}")
    stage_names.append(name)
if copies == 0:
    err("no COPY found")
# What the build needs must be in the context.
for needed in ("scripts/setup", "CMakeLists.txt", "CMakePresets.json", "core", "daemon", "config", "state",
               "cmake", "tests/kafka/pom.xml"):
    if ignored(needed):
        err(f"{needed} is needed by the build but excluded by Dockerfile.dockerignore")

# ---- runtime stage
rt = {}
for ins, args in runtime_stage:
    rt.setdefault(ins, []).append(args)
user = rt.get("USER", [""])[-1]
if not user or user.split(":")[0] in ("root", "0"):
    err("the runtime stage must switch to a non-root USER")
if not any("/var/lib/cdc2doris" in v for v in rt.get("VOLUME", [])):
    err("VOLUME /var/lib/cdc2doris is missing")
hc = " ".join(rt.get("HEALTHCHECK", []))
if "CMD" not in hc or "/healthz" not in hc:
    err("HEALTHCHECK must probe /healthz")
if "curl" in hc and "curl" not in " ".join(rt.get("RUN", [])):
    err("HEALTHCHECK uses curl but the runtime stage does not install it")
if rt.get("ENTRYPOINT", [""])[-1] != '["cdc2doris"]':
    err('ENTRYPOINT must be ["cdc2doris"]')
if rt.get("CMD", [""])[-1] != '["run", "--config", "/etc/cdc2doris/cdc2doris.yaml"]':
    err('CMD must be ["run", "--config", "/etc/cdc2doris/cdc2doris.yaml"]')
if "8080" not in " ".join(rt.get("EXPOSE", [])):
    err("EXPOSE 8080 (admin endpoint) is missing")

runtime_runs = " ".join(rt.get("RUN", []))
m = re.search(r"apt-get install[^&]*", runtime_runs)
installed = set()
if not m:
    err("the runtime stage installs no packages")
else:
    installed = {w for w in m.group(0).split()[2:] if not w.startswith("-")}
    if "--no-install-recommends" not in m.group(0):
        err("apt-get install in the runtime stage needs --no-install-recommends")
if "rm -rf /var/lib/apt/lists" not in runtime_runs:
    err("the runtime stage must remove /var/lib/apt/lists")
for dev in sorted(p for p in installed if p.endswith("-dev") or p in ("build-essential", "cmake", "g++")):
    err(f"runtime stage installs build-only package {dev}")

# Every library the binary links against comes from an installed package
# (or from the base image: libc6, libgcc-s1 are essential in bookworm-slim).
base = {"libc6", "libgcc-s1"}
needed = subprocess.run(["readelf", "-d", binary], check=True, capture_output=True, text=True).stdout
sonames = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", needed)
if not sonames:
    err(f"readelf found no NEEDED libraries in {binary}")
ldd = subprocess.run(["ldd", binary], check=True, capture_output=True, text=True).stdout
paths = dict(re.findall(r"^\s*(\S+) => (\S+)", ldd, re.M))
for so in sonames:
    path = paths.get(so)
    if not path or path == "not":
        err(f"ldd cannot resolve {so}")
        continue
    real = os.path.realpath(path)
    owner = None
    for candidate in (path, real, real.replace("/usr/lib/", "/lib/", 1), path.replace("/lib/", "/usr/lib/", 1)):
        r = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True)
        if r.returncode == 0:
            owner = r.stdout.split(":")[0]
            break
    if owner is None:
        err(f"no Debian package owns {so} ({path})")
    elif owner not in installed and owner not in base:
        err(f"the binary needs {so} from package {owner}, which the runtime stage does not install")

# The package names exist (checked against the local apt lists when present).
if any(f.endswith("_Packages") for f in os.listdir("/var/lib/apt/lists")) if os.path.isdir("/var/lib/apt/lists") else False:
    for p in sorted(installed):
        r = subprocess.run(["apt-cache", "show", "--no-all-versions", p], capture_output=True, text=True)
        if r.returncode != 0 or f"Package: {p}" not in r.stdout:
            err(f"runtime package {p} is unknown to apt")

if errors:
    for e in errors:
        print("FAIL:", e)
    sys.exit(1)
print(f"Dockerfile OK: {len(stages)} stages, {copies} COPY sources, {len(sonames)} shared libraries covered by "
      f"{len(installed)} runtime packages")
