#!/usr/bin/env bash
# The Debian package (cmake/Packaging.cmake): cpack builds it from this build
# tree, its Depends are derived by dpkg-shlibdeps, `dpkg -i` installs it on
# this machine without forcing anything, the installed binary runs `version`
# and `check` on the installed example config, the installed unit passes
# systemd-analyze, and `dpkg -r` / `dpkg -P` remove it again - also when a
# step fails (trap). This build has crash points (dev preset), so it packages
# as <version>~testbuild (CDC2DORIS_PACKAGE_TEST_BUILD=1); the release preset
# packages the real thing with the same rules.
#
# usage: deb_package_test.sh CPACK BUILD_DIR VERSION
# Exit 77 (skipped): not root, or a cdc2doris package not made by this test
# is installed (it is left alone).
set -euo pipefail
cpack=$1 build=$2 version=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "installing a package needs root"
command -v dpkg-shlibdeps >/dev/null || fail "dpkg-shlibdeps missing (Debian package dpkg-dev, scripts/setup)"

tmp=$(mktemp -d)
# One package test at a time on this machine (parallel ctest runs, other
# worktrees): they would install and purge the same package under each other.
exec 9>/run/lock/cdc2doris-deb-package-test.lock
flock -w 600 9 || fail "another package test held the lock for 10 minutes"

status() { dpkg-query -W -f='${Status}' cdc2doris 2>/dev/null || true; }
# dpkg does not wait for its lock; apt runs elsewhere on the machine may hold it.
dpkg_retry() {
  local out i
  for i in $(seq 60); do
    if out=$(dpkg "$@" 2>&1); then echo "$out"; return 0; fi
    case $out in *"lock"*) sleep 1;; *) echo "$out" >&2; return 1;; esac
  done
  echo "$out" >&2; return 1
}
cleanup() {
  local rc=$?
  case $(status) in
    *installed*|*config-files*|*half*|*unpacked*) dpkg_retry -P cdc2doris >/dev/null || rc=1;;
  esac
  [ -n "${made_state:-}" ] && rm -rf /var/lib/cdc2doris
  rm -rf "$tmp"
  exit $rc
}

case $(status) in
  "") ;;
  *)
    installed_version=$(dpkg-query -W -f='${Version}' cdc2doris)
    case $installed_version in
      *~testbuild) echo "purging a test package left by an interrupted run ($installed_version)"
                   dpkg_retry -P cdc2doris >/dev/null;;
      *) skip "cdc2doris $installed_version is installed on this machine; not touching it";;
    esac;;
esac
trap cleanup EXIT

# ---- build the package
CDC2DORIS_PACKAGE_TEST_BUILD=1 "$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/out" \
  > "$tmp/cpack.log" 2>&1 || { cat "$tmp/cpack.log" >&2; fail "cpack failed"; }
deb=$(ls "$tmp"/out/cdc2doris_*.deb)
[ "$(dpkg-deb -f "$deb" Version)" = "${version}~testbuild" ] || fail "version $(dpkg-deb -f "$deb" Version), expected ${version}~testbuild"
# Without the explicit opt-in, a crash-point build refuses to package.
if "$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/refused" >"$tmp/refused.log" 2>&1; then
  fail "cpack packaged a build with crash points without CDC2DORIS_PACKAGE_TEST_BUILD=1"
fi
grep -q "crash points" "$tmp/refused.log" || fail "the refusal does not say why: $(cat "$tmp/refused.log")"

depends=$(dpkg-deb -f "$deb" Depends)
# libsasl2-modules-gssapi-mit: librdkafka's GSSAPI plugin, loaded at run time (no ELF dependency shows it).
for lib in librdkafka1 libyaml-cpp0.7 libssl3 libc6 tzdata libsasl2-modules-gssapi-mit; do
  [[ $depends == *"$lib"* ]] || fail "Depends lacks $lib: $depends"
done
contents=$(dpkg-deb -c "$deb")
for f in ./usr/bin/cdc2doris ./lib/systemd/system/cdc2doris.service ./etc/cdc2doris/cdc2doris.yaml.example \
         ./usr/share/doc/cdc2doris/operations.md ./usr/share/doc/cdc2doris/getting-started.md; do
  grep -q " $f\$" <<<"$contents" || fail "package lacks $f"
done
dpkg-deb -I "$deb" conffiles | grep -qx /etc/cdc2doris/cdc2doris.yaml.example || fail "example config is not a conffile"

# ---- install: no --force-*; Depends must be satisfied by what is installed
dpkg_retry -i "$deb" >/dev/null || fail "dpkg -i failed"
[ "$(status)" = "install ok installed" ] || fail "status after dpkg -i: $(status)"
ldd /usr/bin/cdc2doris | grep -q "not found" && fail "missing shared libraries: $(ldd /usr/bin/cdc2doris | grep 'not found')"

# The installed binary names the version and the commit it was built from
# (core/common/build_info, the commit captured in the build tree).
commit=$(sed -n 's/^#define CDC2DORIS_BUILD_COMMIT "\(.*\)"$/\1/p' "$build/core/common/generated/cdc2doris_build_commit.h")
[ -n "$commit" ] || fail "no commit in $build/core/common/generated/cdc2doris_build_commit.h"
out=$(/usr/bin/cdc2doris version) || fail "cdc2doris version failed"
[ "$out" = "cdc2doris $version (commit $commit)" ] || fail "version printed '$out', expected 'cdc2doris $version (commit $commit)'"

export DORIS_PASSWORD=example-doris-password KAFKA_USERNAME=example-user KAFKA_PASSWORD=example-kafka-password
out=$(/usr/bin/cdc2doris check --config /etc/cdc2doris/cdc2doris.yaml.example 2>&1) \
  || fail "check of the installed example failed: $out"
[[ $out == *"is valid"* ]] || fail "unexpected check output: $out"
[[ $out == *"$DORIS_PASSWORD"* || $out == *"$KAFKA_PASSWORD"* ]] && fail "check printed a secret"

out=$(systemd-analyze verify --man=no /lib/systemd/system/cdc2doris.service 2>&1) \
  || fail "systemd-analyze verify of the installed unit: $out"
[ -z "$out" ] || fail "systemd-analyze verify warned about the installed unit: $out"

# ---- remove keeps the conffile, purge removes it and the state directory
dpkg_retry -r cdc2doris >/dev/null || fail "dpkg -r failed"
[ ! -e /usr/bin/cdc2doris ] || fail "dpkg -r left /usr/bin/cdc2doris"
[ -e /etc/cdc2doris/cdc2doris.yaml.example ] || fail "dpkg -r removed the conffile (only purge should)"
[ "$(status)" = "deinstall ok config-files" ] || fail "status after dpkg -r: $(status)"
if [ ! -e /var/lib/cdc2doris ]; then
  made_state=1
  mkdir -p /var/lib/cdc2doris && touch /var/lib/cdc2doris/checkpoint-marker
fi
dpkg_retry -P cdc2doris >/dev/null || fail "dpkg -P failed"
[ -z "$(status)" ] || [[ $(status) == *not-installed* ]] || fail "status after purge: $(status)"
[ ! -e /etc/cdc2doris/cdc2doris.yaml.example ] || fail "purge left the example config"
if [ -n "${made_state:-}" ]; then
  [ ! -e /var/lib/cdc2doris ] || fail "purge left /var/lib/cdc2doris"
fi
echo "package OK: $(basename "$deb"), Depends: $depends"
