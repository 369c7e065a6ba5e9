#!/usr/bin/env bash
# Builds the decoder fuzz target with clang (own build dir) and runs it for
# SECONDS (default 60). Exits non-zero on any finding (crash, sanitizer
# report, leak, timeout) or build failure. New inputs go to a scratch corpus
# in the build dir; the committed seed corpus is only read.
set -euo pipefail
SECONDS_TO_RUN="${1:-60}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../../.." && pwd)"
BUILD="${FUZZ_BUILD_DIR:-$REPO/build-fuzz-decode}"
CXX_BIN="${FUZZ_CXX:-$(command -v clang++-14 || command -v clang++)}"
if [ -z "$CXX_BIN" ]; then echo "run.sh: clang++ not found (apt-get install clang-14 libclang-rt-14-dev)" >&2; exit 2; fi
cmake -S "$HERE" -B "$BUILD" -G Ninja -DCMAKE_CXX_COMPILER="$CXX_BIN" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C "$BUILD" -j2 fuzz_decoder
mkdir -p "$BUILD/work-corpus" "$BUILD/artifacts"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
exec "$BUILD/fuzz_decoder" -max_total_time="$SECONDS_TO_RUN" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
  -artifact_prefix="$BUILD/artifacts/" -print_final_stats=1 "$BUILD/work-corpus" "$HERE/corpus"
