#!/usr/bin/env bash
# Every preset a document names works (issue 35 item 1). The names are read
# at run time from README.md and docs/*.md (`cmake --preset X`, `cmake
# --build --preset X`, `ctest --preset X`, `cpack --preset X`); each must
# exist in CMakePresets.json as that kind of preset ("the `X` preset" in
# prose: a configure preset). In a clean clone of this
# checkout (no build/):
#   * every named configure preset configures, and its whole build graph is
#     complete (`ninja -n` of all targets: every input exists or has a rule);
#   * a preset that builds another set of directories than `dev` (tests off:
#     `bench`) also builds completely, with no --target - the way `release`
#     once failed, pulling code from tests/ into a build without tests.
# Not built here, and why: `dev` is what scripts/test builds completely before
# running this; `release` builds completely in deploy_install_docs (README's
# commands, then with no --target); `asan` and `tsan` compile the same
# targets as `dev` with other flags, and building each (~20 min on 2 cores
# without ccache) is what their own documented commands do.
#
# usage: doc_presets_test.sh SOURCE_DIR
set -euo pipefail
src=$(realpath "$1")
. "$(dirname "$0")/deb_lib.sh"
. "$(dirname "$0")/doc_commands_lib.sh"
command -v git >/dev/null || skip "git missing: cannot make a clean clone"
[ "$(git -C "$src" rev-parse --show-toplevel 2>/dev/null)" = "$src" ] || skip "$src is not a git checkout"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
if command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_NOHASHDIR=1
fi
tree=$tmp/tree
clean_clone "$src" "$tree"
export CCACHE_BASEDIR=$tree
cd "$tree"

# "KIND NAME" for each preset the documents name.
# "the `bench` preset" in prose counts as a configure preset.
named=$( (grep -ohE '(cmake( --build)?|ctest|cpack) --preset [A-Za-z0-9_-]+' README.md docs/*.md \
            | sed -E 's/^cmake --build --preset /build /; s/^cmake --preset /configure /; s/^ctest --preset /test /; s/^cpack --preset /package /'
          grep -ohE '`[A-Za-z0-9_-]+` preset' README.md docs/*.md | sed -E 's/^`([^`]+)` preset$/configure \1/') \
        | sort -u)
[ -n "$named" ] || fail "no --preset named in README.md or docs/*.md"
echo "presets the documents name:" $(tr '\n' ',' <<<"$named")

exists() {  # KIND NAME: listed by `cmake --list-presets=KIND` / ctest / cpack
  local out
  case $1 in
    configure) out=$(cmake --list-presets=configure);;
    build) out=$(cmake --list-presets=build);;
    test) out=$(ctest --list-presets);;
    package) out=$(cpack --list-presets);;
  esac
  grep -qE "^ +\"$2\"" <<<"$out"
}
while read -r kind name; do
  exists "$kind" "$name" || fail "the documents name $kind preset '$name', which CMakePresets.json lacks"
done <<<"$named"

# Configure presets: named directly, or behind a named build/test/package preset.
configure_presets=$(python3 - "$named" <<'EOF'
import json, sys
presets = json.load(open("CMakePresets.json"))
by_kind = {"build": "buildPresets", "test": "testPresets", "package": "packagePresets"}
out = set()
for line in sys.argv[1].splitlines():
    kind, name = line.split()
    if kind == "configure":
        out.add(name)
    else:
        out.add(next(p["configurePreset"] for p in presets[by_kind[kind]] if p["name"] == name))
print("\n".join(sorted(out)))
EOF
)
for p in $configure_presets; do
  t0=$SECONDS
  cmake --preset "$p" >"$tmp/$p.configure.log" 2>&1 || { tail -n 30 "$tmp/$p.configure.log" >&2; fail "cmake --preset $p failed"; }
  # ninja -n: the whole graph without running it; a missing input with no rule
  # fails here. From a copy of build.ninja: on the file itself, the always-run
  # glob check makes ninja "regenerate" it and stop after that in a dry run.
  cp "build/$p/build.ninja" "build/$p/graph-check.ninja"
  ninja -C "build/$p" -f graph-check.ninja -n all >"$tmp/$p.graph.log" 2>&1 \
    || { tail -n 30 "$tmp/$p.graph.log" >&2; fail "the build graph of preset $p is incomplete"; }
  rm "build/$p/graph-check.ninja"
  steps=$(grep -c '^\[' "$tmp/$p.graph.log" || true)
  [ "$steps" -gt 50 ] || fail "preset $p: a dry run of all targets has only $steps steps: $(tail -n 3 "$tmp/$p.graph.log")"
  tests_on=$(sed -n 's/^CDC2DORIS_TESTS:BOOL=//p' "build/$p/CMakeCache.txt")
  if [ "$tests_on" = OFF ] && [ "$p" != release ]; then
    cmake --build --preset "$p" >"$tmp/$p.build.log" 2>&1 || { tail -n 40 "$tmp/$p.build.log" >&2; fail "cmake --build --preset $p (no --target) failed"; }
    echo "$p: configures, graph complete ($steps steps), builds completely ($((SECONDS - t0)) s)"
  else
    echo "$p: configures, graph complete ($steps steps) ($((SECONDS - t0)) s)"
  fi
done
echo "doc presets OK: $(tr '\n' ' ' <<<"$configure_presets")"
