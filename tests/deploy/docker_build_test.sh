#!/usr/bin/env bash
# The container image, built with docs/operations.md's own `docker build`
# command (the ```sh block under "## Docker", read at run time) in a clean
# clone of this checkout, by buildah from Debian (`docker` there runs
# `buildah bud`; this machine has no Docker daemon). Then the image's binary
# runs `version` (naming the commit the build arg passed) and `check` on the
# example config the image ships, with every shared library found, as the
# image's user 10001.
#
# Base image: the Dockerfile's FROM is pulled from its registry when that
# works. Where it does not (no route to Docker Hub), a minimal Debian 12 is
# bootstrapped from the apt mirror with mmdebstrap and stored under the FROM
# name in a private container store (never the machine's), which the test
# says; the image is then the same Debian release, not the same dated image.
#
# Slow: a full release build inside the container without ccache (~15 min on
# 2 cores) plus the build stage's apt downloads, so it runs only when asked:
# CDC2DORIS_CONTAINER_BUILD=1 (ctest -R deploy_docker_build).
#
# usage: docker_build_test.sh SOURCE_DIR VERSION
# Exit 77 (skipped): not asked, not root, buildah missing, not a git checkout.
set -euo pipefail
src=$(realpath "$1") version=$2
. "$(dirname "$0")/deb_lib.sh"
. "$(dirname "$0")/doc_commands_lib.sh"
[ "${CDC2DORIS_CONTAINER_BUILD:-0}" = 1 ] || skip "a container build takes ~15 min: set CDC2DORIS_CONTAINER_BUILD=1 to run it"
[ "$(id -u)" -eq 0 ] || skip "buildah with chroot isolation needs root"
command -v buildah >/dev/null || skip "buildah missing (Debian package buildah)"
[ "$(git -C "$src" rev-parse --show-toplevel 2>/dev/null)" = "$src" ] || skip "$src is not a git checkout"

tmp=$(mktemp -d)
store=(--root "$tmp/storage" --runroot "$tmp/run")
cleanup() {
  local rc=$?
  buildah "${store[@]}" rm --all >/dev/null 2>&1 || true
  # overlay mounts of the private store go before its files
  buildah "${store[@]}" umount --all >/dev/null 2>&1 || true
  rm -rf "$tmp" 2>/dev/null || { umount -R "$tmp/storage" 2>/dev/null; rm -rf "$tmp"; }
  exit $rc
}
trap cleanup EXIT
# Inside a container (this CI) the OCI defaults fail: no raising RLIMIT_NOFILE
# and NPROC, and cgroup v1/v2 hybrid mounts; RUN steps use chroot isolation.
cat >"$tmp/containers.conf" <<'EOF'
[containers]
default_ulimits = []
EOF
export CONTAINERS_CONF=$tmp/containers.conf BUILDAH_ISOLATION=chroot

tree=$tmp/tree
clean_clone "$src" "$tree"
build_commit=$(git -C "$tree" rev-parse --short=12 HEAD)

# ---- base images
cache=${XDG_CACHE_HOME:-$HOME/.cache}/cdc2doris
for image in $(sed -nE 's/^FROM +([^ ]+).*/\1/p' "$tree/deploy/docker/Dockerfile" | sort -u); do
  if out=$(timeout 120 buildah "${store[@]}" pull -q "docker.io/library/$image" 2>&1); then
    echo "base image $image: pulled"
    continue
  fi
  echo "base image $image: the pull failed: $(tail -n 1 <<<"$out")"
  [[ $image == debian:bookworm* ]] || fail "cannot make $image locally (only Debian 12 images can be bootstrapped here)"
  rootfs=$cache/debian-bookworm-minbase.tar
  if [ ! -f "$rootfs" ] || [ -n "$(find "$rootfs" -mtime +7)" ]; then
    command -v mmdebstrap >/dev/null || skip "the base image cannot be pulled and mmdebstrap is missing to bootstrap it"
    mkdir -p "$cache"
    # mmdebstrap picks the output format by the name's extension: .tar
    mmdebstrap --variant=minbase --mode=root bookworm "$cache/bootstrap.$$.tar" >"$tmp/mmdebstrap.log" 2>&1 \
      || { rm -f "$cache/bootstrap.$$.tar"; tail -n 20 "$tmp/mmdebstrap.log" >&2; fail "mmdebstrap bookworm failed"; }
    mv "$cache/bootstrap.$$.tar" "$rootfs"
  fi
  c=$(buildah "${store[@]}" from scratch)
  buildah "${store[@]}" add "$c" "$rootfs" / >/dev/null   # a local tar is unpacked
  buildah "${store[@]}" config --cmd /bin/bash "$c"
  buildah "${store[@]}" commit -q --rm "$c" "docker.io/library/$image" >/dev/null \
    || fail "storing the bootstrapped rootfs as $image failed"
  echo "    instead: Debian $(tar -xOf "$rootfs" ./etc/debian_version) bootstrapped from the apt mirror with mmdebstrap, stored as $image"
done

# ---- docs/operations.md's build command, with buildah as `docker build`
# export -f cannot carry the array: the function reads the store from the environment.
export store_args="${store[*]}"
docker() {
  [ "$1" = build ] || { echo "only 'docker build' runs here, not 'docker $1'" >&2; return 2; }
  shift
  # shellcheck disable=SC2086
  buildah $store_args bud --pull-never "$@"
}
export -f docker
built=
while IFS=$'\t' read -r no line; do
  [[ $line == docker\ build* ]] || continue
  run_doc_line "docs/operations.md:$no" "$tree" "$line" "$tmp/build.log"
  built=1
done < <(doc_lines "$tree/docs/operations.md" "## Docker")
[ -n "$built" ] || fail "docs/operations.md '## Docker' has no docker build command"
tag=$(sed -nE 's/.*docker build.* -t ([^ ]+).*/\1/p' <<<"$(doc_lines "$tree/docs/operations.md" "## Docker")" | head -n 1)
[ -n "$tag" ] || fail "no -t TAG in the documented docker build"

# ---- the image: user, binary, libraries, version, check of the shipped example
user=$(buildah "${store[@]}" inspect --type image --format '{{.Docker.Config.User}}' "$tag")
[ "$user" = 10001:10001 ] || fail "image user '$user', expected 10001:10001"
c=$(buildah "${store[@]}" from --pull-never "$tag")
in_image() { buildah "${store[@]}" run --isolation chroot "$c" -- "$@"; }
out=$(in_image sh -c 'ldd /usr/bin/cdc2doris') || fail "ldd in the image failed: $out"
! grep -q "not found" <<<"$out" || fail "the image lacks shared libraries: $(grep 'not found' <<<"$out")"
out=$(in_image id -u) && [ "$out" = 10001 ] || fail "RUN in the image is uid '$out', expected 10001"
out=$(in_image cdc2doris version) || fail "cdc2doris version in the image failed: $out"
[ "$out" = "cdc2doris $version (commit $build_commit)" ] || fail "image version '$out', expected 'cdc2doris $version (commit $build_commit)'"
out=$(in_image env DORIS_PASSWORD=example-doris-password KAFKA_USERNAME=example-user KAFKA_PASSWORD=example-kafka-password \
        cdc2doris check --config /usr/share/doc/cdc2doris/examples/cdc2doris.yaml 2>&1) \
  || fail "check of the image's example config failed: $out"
[[ $out == *"is valid"* ]] || fail "unexpected check output: $out"
echo "container image OK: built by docs/operations.md's command, $out"
