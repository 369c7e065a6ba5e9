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
. "$(dirname "$0")/deb_lib.sh"
command -v dpkg-shlibdeps >/dev/null || fail "dpkg-shlibdeps missing (Debian package dpkg-dev, scripts/setup)"

deb_begin
tmp=$(mktemp -d)
cleanup() {
  local rc=$?
  deb_end || rc=1
  rm -rf "$tmp"
  exit $rc
}
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
# The installed binary names the version and the commit it was built from
# (core/common/build_info, the commit captured in the build tree).
commit=$(sed -n 's/^#define CDC2DORIS_BUILD_COMMIT "\(.*\)"$/\1/p' "$build/core/common/generated/cdc2doris_build_commit.h")
[ -n "$commit" ] || fail "no commit in $build/core/common/generated/cdc2doris_build_commit.h"
deb_verify_installed "$version" "$commit"

# ---- remove keeps the conffile, purge removes it and the state directory
dpkg_retry -r cdc2doris >/dev/null || fail "dpkg -r failed"
[ ! -e /usr/bin/cdc2doris ] || fail "dpkg -r left /usr/bin/cdc2doris"
[ -e /etc/cdc2doris/cdc2doris.yaml.example ] || fail "dpkg -r removed the conffile (only purge should)"
[ "$(deb_status)" = "deinstall ok config-files" ] || fail "status after dpkg -r: $(deb_status)"
deb_verify_purge dpkg_retry -P cdc2doris >/dev/null
echo "package OK: $(basename "$deb"), Depends: $depends"
