#!/usr/bin/env bash
# Negative controls for docker_lint.py: each mutation of the Dockerfile or of
# scripts/setup's BUILD_PACKAGES must be reported; the unmutated copy passes.
# usage: docker_lint_selftest.sh REPO_ROOT BUILT_BINARY CMAKE_CACHE
set -euo pipefail
root=$1 binary=$2 cache=$3
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

fresh() {  # a copy of the repository's top level with deploy/ and scripts/ writable
  rm -rf "$tmp/r" && mkdir "$tmp/r"
  for e in "$root"/* "$root"/.[!.]*; do
    [ -e "$e" ] || continue
    case $(basename "$e") in deploy|scripts) cp -r "$e" "$tmp/r/";; *) ln -s "$e" "$tmp/r/";; esac
  done
}
lint() { python3 "$here/docker_lint.py" "$tmp/r" "$binary" "$cache"; }
expect_error() {  # expect_error NAME PATTERN
  local out
  if out=$(lint 2>&1); then fail "$1: the lint accepted it"; fi
  grep -q -- "$2" <<<"$out" || fail "$1: expected '$2' in: $out"
  echo "ok: $1 rejected"
}

fresh
lint >/dev/null || fail "the unmodified copy does not pass: $(lint 2>&1)"

fresh; sed -i 's#^FROM debian:bookworm-[0-9]*-slim AS build#FROM debian:bookworm-slim AS build#' "$tmp/r/deploy/docker/Dockerfile"
expect_error "moving base tag" "not a moving tag"

fresh; sed -i '0,/^FROM debian:bookworm-[0-9]*-slim/s//FROM debian:bookworm-20240101-slim/' "$tmp/r/deploy/docker/Dockerfile"
expect_error "stages on different images" "different base images"

fresh; sed -i 's#scripts/setup --build-only#scripts/setup#' "$tmp/r/deploy/docker/Dockerfile"
expect_error "full setup in the build stage" "scripts/setup --build-only"

fresh; sed -i 's#^  build-essential cmake ninja-build pkg-config$#  build-essential cmake ninja-build pkg-config maven openjdk-17-jre-headless#' "$tmp/r/scripts/setup"
grep -q 'pkg-config maven' "$tmp/r/scripts/setup" || fail "mutation did not apply (scripts/setup changed shape?)"
expect_error "test tools in BUILD_PACKAGES" "maven, which only tests"

fresh; sed -i 's#^\(  librdkafka-dev\) #  #' "$tmp/r/scripts/setup"
grep -q '^  librdkafka-dev' "$tmp/r/scripts/setup" && fail "mutation did not apply (scripts/setup changed shape?)"
expect_error "a library missing from BUILD_PACKAGES" "librdkafka-dev, which scripts/setup"
fresh; sed -i 's# librdkafka1 # #' "$tmp/r/deploy/docker/Dockerfile"
expect_error "a runtime library not installed" "librdkafka.so.1 from package librdkafka1"

fresh; sed -i 's# libsnappy1v5 # libsnappy1v5 libno-such-package1 #' "$tmp/r/deploy/docker/Dockerfile"
if [ -n "$(ls /var/lib/apt/lists/*_Packages 2>/dev/null)" ]; then
  expect_error "an unknown runtime package" "libno-such-package1 is unknown to apt"
fi
echo "docker lint negative controls OK"
