#!/usr/bin/env bash
# cmake/BuildCommit.cmake: the commit a build reports. A fresh checkout gives
# its short hash, changed tracked files add "-dirty", untracked files do not,
# sources outside a git checkout (a tarball, also one unpacked inside another
# repository) give "unknown", an explicit commit wins, and an unchanged commit
# leaves the header untouched so nothing recompiles.
set -euo pipefail
script=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
git=$(command -v git) || fail "git not installed"

gen() {  # gen SOURCE_DIR [COMMIT_OVERRIDE] -> prints the commit written
  cmake -DSOURCE_DIR="$1" -DOUTPUT="$tmp/out.h" -DVERSION=9.8.7 -DGIT_EXECUTABLE="$git" \
        -DCOMMIT_OVERRIDE="${2:-}" -P "$script"
  grep -q '^#define CDC2DORIS_BUILD_VERSION "9.8.7"$' "$tmp/out.h" || fail "version missing: $(cat "$tmp/out.h")"
  sed -n 's/^#define CDC2DORIS_BUILD_COMMIT "\(.*\)"$/\1/p' "$tmp/out.h"
}
expect() { [ "$1" = "$2" ] || fail "$3: expected '$2', got '$1'"; }

# Not a checkout.
mkdir "$tmp/tarball"
expect "$(gen "$tmp/tarball")" unknown "plain directory"

# A checkout: short hash, clean.
repo=$tmp/repo
mkdir "$repo"
git -C "$repo" init -q
echo a > "$repo/f"
git -C "$repo" add f
git -C "$repo" -c user.name=t -c user.email=t@t commit -qm one
head=$(git -C "$repo" rev-parse --short=12 HEAD)
expect "$(gen "$repo")" "$head" "clean checkout"

# Untracked files (a build directory) keep it clean; a changed tracked file does not.
mkdir "$repo/build" && echo x > "$repo/build/junk"
expect "$(gen "$repo")" "$head" "untracked files only"
echo b > "$repo/f"
expect "$(gen "$repo")" "$head-dirty" "modified tracked file"
git -C "$repo" checkout -q f

# Sources unpacked inside some other repository are not that repository's commit.
mkdir "$repo/vendor"
expect "$(gen "$repo/vendor")" unknown "directory inside another checkout"

# Git missing: unknown, not an error.
out=$(cmake -DSOURCE_DIR="$repo" -DOUTPUT="$tmp/nogit.h" -DVERSION=1 -DGIT_EXECUTABLE= -P "$script" && cat "$tmp/nogit.h")
grep -q 'CDC2DORIS_BUILD_COMMIT "unknown"' <<<"$out" || fail "no git: $out"

# An explicit commit (packager building from a tarball) wins; junk is refused.
expect "$(gen "$tmp/tarball" 1a2b3c4d)" 1a2b3c4d "override"
if cmake -DSOURCE_DIR="$tmp/tarball" -DOUTPUT="$tmp/bad.h" -DVERSION=1 -DGIT_EXECUTABLE= \
         -DCOMMIT_OVERRIDE='x"; evil' -P "$script" >/dev/null 2>&1; then
  fail "a commit with quotes was accepted into a C string"
fi

# Unchanged text: the file is not rewritten (Ninja restat then rebuilds nothing).
gen "$repo" >/dev/null
touch -d '2001-01-01' "$tmp/out.h"
gen "$repo" >/dev/null
[ "$(stat -c %Y "$tmp/out.h")" = "$(date -d 2001-01-01 +%s)" ] || fail "unchanged header was rewritten"
echo "build commit OK"
