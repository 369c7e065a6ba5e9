#!/usr/bin/env bash
# The documented install path, run as written (issue 35 item 1): the ```sh
# block under README.md "## Install" and the one under docs/getting-started.md
# "### The Debian package" are read from the documents at run time and run
# line by line, each in its own clean clone of this checkout (no build/, the
# uncommitted changes to tracked files applied, as a new user's clone would
# be): scripts/setup --build-only, the release preset, cpack, `apt install
# ./...deb`, `cdc2doris version`. After each, the installed package is checked
# (version and commit, `check` on the installed example, systemd-analyze of
# the installed unit) and removed with the documents' `apt purge cdc2doris`.
# The first clone then also builds the release preset with no --target: the
# preset builds completely, not only the daemon.
#
# usage: install_docs_test.sh SOURCE_DIR VERSION
# Exit 77 (skipped): not root, not a git checkout, or a cdc2doris package not
# made by a test is installed (it is left alone).
#
# apt is given only what a user at a terminal gives it: "yes" to its question
# and patience with another apt's lock (APT_CONFIG below). Builds go through
# ccache when it is installed (scripts/test), with -j = nproc unless
# CMAKE_BUILD_PARALLEL_LEVEL says otherwise.
set -euo pipefail
src=$(realpath "$1") version=$2
. "$(dirname "$0")/deb_lib.sh"
. "$(dirname "$0")/doc_commands_lib.sh"
[ "$(id -u)" -eq 0 ] || skip "installing a package needs root"
command -v git >/dev/null || skip "git missing: cannot make a clean clone"
[ "$(git -C "$src" rev-parse --show-toplevel 2>/dev/null)" = "$src" ] || skip "$src is not a git checkout"
# Not worth a build when the package step would skip anyway (deb_begin checks again under the lock).
case $(deb_status) in
  ""|*not-installed*) ;;
  *) v=$(dpkg-query -W -f='${Version}' cdc2doris)
     [[ $v == *~testbuild ]] || [ -e "$DEB_TEST_MARKER" ] || skip "cdc2doris $v is installed on this machine; not touching it";;
esac

tmp=$(mktemp -d)
chmod 755 "$tmp"   # apt fetches ./x.deb as user _apt
locked=
cleanup() {
  local rc=$?
  [ -z "$locked" ] || deb_end || rc=1
  rm -rf "$tmp"
  exit $rc
}
trap cleanup EXIT

cat >"$tmp/apt.conf" <<'EOF'
APT::Get::Assume-Yes "true";
DPkg::Lock::Timeout "600";
EOF
export APT_CONFIG=$tmp/apt.conf DEBIAN_FRONTEND=noninteractive
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
if command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_NOHASHDIR=1
fi

# Runs a document's block line by line (a user pasting them, so a failing
# line fails here with its file:line; `a && b` on one line fails as a whole,
# like in a terminal), in TREE, through ccache based there.
run_block() {
  local doc=$1 heading=$2 tree=$3 lines no line
  lines=$(doc_lines "$src/$doc" "$heading")
  echo "== $doc '$heading' in a clean clone ($clone_commit)"
  while IFS=$'\t' read -r no line; do
    # Installing the package: from here on this test owns cdc2doris on the machine.
    if [ -z "$locked" ] && [[ $line =~ (apt|apt-get)\ +install|dpkg\ +-i ]]; then
      deb_begin 1200; locked=1; touch "$DEB_TEST_MARKER"
    fi
    CCACHE_BASEDIR=$tree run_doc_line "$doc:$no" "$tree" "$line" "$tmp/line.log"
  done <<<"$lines"
  [ -n "$locked" ] || fail "$doc '$heading' installs no package"
}

installed_commit() {
  sed -n 's/^#define CDC2DORIS_BUILD_COMMIT "\(.*\)"$/\1/p' "$1/build/release/core/common/generated/cdc2doris_build_commit.h"
}

# The documents' removal (getting-started.md: `apt purge cdc2doris`).
purge() { apt purge cdc2doris >"$tmp/purge.log" 2>&1 || { cat "$tmp/purge.log" >&2; return 1; }; }

n=0
for doc_heading in "README.md|## Install" "docs/getting-started.md|### The Debian package"; do
  n=$((n + 1))
  tree=$tmp/tree$n
  clean_clone "$src" "$tree"
  run_block "${doc_heading%%|*}" "${doc_heading#*|}" "$tree"
  [ "$(installed_commit "$tree")" = "$clone_commit" ] \
    || fail "the release build names commit '$(installed_commit "$tree")', expected $clone_commit"
  deb_verify_installed "$version" "$clone_commit"
  [ "$(dpkg-query -W -f='${Version}' cdc2doris)" = "$version" ] || fail "installed version $(dpkg-query -W -f='${Version}' cdc2doris), expected $version"
  deb_verify_purge purge
  echo "    installed, verified and purged"
  if [ $n -eq 1 ]; then
    # Every target of the release preset, not only the one the documents name.
    t0=$SECONDS
    (cd "$tree" && CCACHE_BASEDIR=$tree cmake --build --preset release) >"$tmp/all.log" 2>&1 \
      || { tail -n 40 "$tmp/all.log" >&2; fail "cmake --build --preset release (no --target) failed"; }
    echo "== cmake --build --preset release (no --target): complete ($((SECONDS - t0)) s)"
  fi
  rm -rf "$tree"
done
echo "install docs OK: README.md and docs/getting-started.md, commit $clone_commit"
