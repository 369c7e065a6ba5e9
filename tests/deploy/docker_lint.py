#!/usr/bin/env python3
"""Offline checks of deploy/docker/Dockerfile (no Docker engine, no hadolint):

* every stage is FROM the same pinned Debian 12 image (a dated tag
  debian:bookworm-YYYYMMDD-slim or a @sha256 digest), never a moving tag;
* the build stage runs the project's own scripts (scripts/setup --build-only,
  the `release` preset of CMakePresets.json), and installs only what the build
  needs: scripts/setup's BUILD_PACKAGES hold no test-only package (broker, JDK,
  databases, Python tools, test framework), and every file the CMake
  configuration found (the build tree's CMakeCache.txt, next to the binary)
  comes from a package those BUILD_PACKAGES pull in (or the base image);
* every COPY source exists in the repository and is not excluded by
  Dockerfile.dockerignore; every COPY --from names an earlier stage;
* the runtime stage installs a Debian package for every shared library the
  built binary needs (readelf NEEDED -> ldd path -> dpkg -S package), and the
  package names exist in the apt cache when it has lists;
* non-root USER, VOLUME /var/lib/cdc2doris, HEALTHCHECK on /healthz,
  ENTRYPOINT ["cdc2doris"], CMD run --config /etc/cdc2doris/cdc2doris.yaml.

usage: docker_lint.py REPO_ROOT BUILT_BINARY [CMAKE_CACHE]
"""
import fnmatch
import json
import os
import re
import shlex
import subprocess
import sys

root, binary = sys.argv[1], sys.argv[2]
cmake_cache = sys.argv[3] if len(sys.argv) > 3 else None
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
images = set()
PINNED = re.compile(r"debian:bookworm-\d{8}-slim|debian:bookworm-slim@sha256:[0-9a-f]{64}")
for ins, args in instructions:
    if ins == "FROM":
        parts = args.split()
        name = parts[2] if len(parts) >= 3 and parts[1].upper() == "AS" else None
        if not PINNED.fullmatch(parts[0]):
            err(f"FROM {parts[0]}: every stage must be a pinned Debian 12 image "
                "(debian:bookworm-YYYYMMDD-slim or debian:bookworm-slim@sha256:...), not a moving tag")
        images.add(parts[0])
        stages.append((name, []))
    elif not stages:
        if ins != "ARG":
            err(f"{ins} before the first FROM")
    else:
        stages[-1][1].append((ins, args))

if len(stages) < 2:
    err("expected a multi-stage build (build + runtime)")
if len(images) > 1:
    err(f"stages use different base images {sorted(images)}: the runtime libraries must match the build's")
build_stage, runtime_stage = stages[0][1], stages[-1][1]

# ---- the build stage runs the same scripts as CI
build_runs = " ".join(a for i, a in build_stage if i == "RUN")
if not re.search(r"scripts/setup --build-only\b", build_runs):
    err("the build stage must run scripts/setup --build-only (the build's packages, not the test tools)")
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

# ---- the build stage's packages: scripts/setup BUILD_PACKAGES
def bash_array(text, name):
    m = re.search(name + r"=\((.*?)\n\)", text, re.S)
    if not m:
        return None
    words = []
    for line in m.group(1).splitlines():
        words += line.split("#", 1)[0].split()
    return words


setup_text = open(os.path.join(root, "scripts/setup")).read()
build_packages = bash_array(setup_text, "BUILD_PACKAGES")
if not build_packages:
    err("scripts/setup has no BUILD_PACKAGES array (what --build-only installs)")
    build_packages = []
TEST_ONLY = re.compile(r"openjdk-.*|default-jre.*|maven|postgresql.*|mariadb-.*|mysql-.*|kafkacat|kcat|prometheus"
                       r"|python3.*|catch2|clang.*|libclang-rt-.*|curl|systemd|dpkg-dev")
for p in build_packages:
    if TEST_ONLY.fullmatch(p):
        err(f"scripts/setup BUILD_PACKAGES installs {p}, which only tests/tools need (the image build would carry it)")


def installed_depends():
    """{package: [dependency names]} for every installed package, in one dpkg-query call."""
    out = subprocess.run(["dpkg-query", "-W", "-f=${Package}\t${Depends}, ${Pre-Depends}\n"],
                         capture_output=True, text=True).stdout
    deps = {}
    for line in out.splitlines():
        pkg, _, rest = line.partition("\t")
        names = []
        for alt in rest.split(","):
            for d in alt.split("|"):
                d = d.strip().split(" ")[0].split(":")[0]
                if d:
                    names.append(d)
        deps[pkg.split(":")[0]] = names
    return deps


def closure(start, deps):
    seen, pending = set(), list(start)
    while pending:
        p = pending.pop()
        if p not in seen:
            seen.add(p)
            pending += [d for d in deps.get(p, []) if d not in seen]
    return seen


def owners(paths):
    """{path: [packages]} for the paths dpkg knows, trying the usrmerge spellings; one dpkg -S call per pass.
    A directory (e.g. /usr/include) has many owners; any one installed by the image provides it."""
    found = {}
    candidates = {p: [p, os.path.realpath(p)] for p in paths}
    for p, c in candidates.items():
        for x in list(c):
            for a, b in (("/usr/lib/", "/lib/"), ("/usr/bin/", "/bin/")):
                if x.startswith(a):
                    c.append(b + x[len(a):])
    for attempt in range(4):
        pending = {p: c[attempt] for p, c in candidates.items() if p not in found and len(c) > attempt}
        if not pending:
            break
        out = subprocess.run(["dpkg", "-S"] + sorted(set(pending.values())), capture_output=True, text=True).stdout
        owner_by_path = {}
        for line in out.splitlines():
            if line.startswith("diversion ") or ": " not in line:
                continue
            pkgs, _, path = line.partition(": ")
            owner_by_path[path] = [p.strip().split(":")[0] for p in pkgs.split(",")]
        for p, x in pending.items():
            if x in owner_by_path:
                found[p] = owner_by_path[x]
    return found


if cmake_cache and build_packages:
    deps = installed_depends()
    # The base image's own packages (Essential / Priority required) need no install.
    listing = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${Essential} ${Priority}\n"],
                             capture_output=True, text=True).stdout
    base_pkgs = {l.split()[0].split(":")[0] for l in listing.splitlines()
                 if " yes " in l + " " or l.endswith(" required")}
    provided = closure(set(build_packages) | base_pkgs, deps)
    # Test-build-only cache entries: the test framework, and git (the image
    # build gets the commit from --build-arg CDC2DORIS_COMMIT, .git is not in the context).
    skip = re.compile(r"Catch2_DIR|GIT_EXECUTABLE|CMAKE_.*_COMPILER_LAUNCHER")
    used = {}
    for line in open(cmake_cache):
        m = re.match(r"([^#/:=][^:=]*):(PATH|FILEPATH)=(/\S+)$", line.strip())
        if m and not skip.fullmatch(m.group(1)) and m.group(3).startswith("/usr/") and os.path.exists(m.group(3)):
            used[m.group(3)] = m.group(1)
    owner = owners(used)  # paths no package owns (generated, /usr/local) are not checked
    for path, pkgs in sorted(owner.items()):
        if not any(p in provided for p in pkgs):
            err(f"the build uses {path} ({used[path]}) from package {pkgs[0]}, which scripts/setup "
                "BUILD_PACKAGES does not install (the image build would fail)")
    if not owner:
        err(f"no package-owned paths found in {cmake_cache}")
    build_paths_checked = len(owner)

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
# Loaded at run time by librdkafka for sasl.mechanism GSSAPI (Kerberos), so
# no ELF dependency below would catch its absence; kinit renews the tickets.
for runtime_only in ("libsasl2-modules-gssapi-mit", "krb5-user"):
    if runtime_only not in installed:
        err(f"the runtime stage must install {runtime_only} (Kafka SASL/GSSAPI, docs/operations.md \"Security\")")
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
resolved = {so: paths[so] for so in sonames if paths.get(so) not in (None, "not")}
for so in sonames:
    if so not in resolved:
        err(f"ldd cannot resolve {so}")
lib_owner = owners(set(resolved.values()))
for so, path in resolved.items():
    owners_of = lib_owner.get(path)
    if owners_of is None:
        err(f"no Debian package owns {so} ({path})")
    elif not any(o in installed or o in base for o in owners_of):
        err(f"the binary needs {so} from package {owners_of[0]}, which the runtime stage does not install")

# The package names exist (checked against the local apt lists when present).
if any(f.endswith("_Packages") for f in os.listdir("/var/lib/apt/lists")) if os.path.isdir("/var/lib/apt/lists") else False:
    # One apt-cache call: it takes seconds to load its cache on a busy machine.
    r = subprocess.run(["apt-cache", "show", "--no-all-versions"] + sorted(installed), capture_output=True, text=True)
    known = set(re.findall(r"^Package: (\S+)", r.stdout, re.M))
    for p in sorted(installed - known):
        err(f"runtime package {p} is unknown to apt")

if errors:
    for e in errors:
        print("FAIL:", e)
    sys.exit(1)
print(f"Dockerfile OK: {len(stages)} stages, {copies} COPY sources, {len(build_packages)} build packages covering "
      f"{globals().get('build_paths_checked', 0)} paths of the CMake configuration, {len(sonames)} shared libraries "
      f"covered by {len(installed)} runtime packages")
