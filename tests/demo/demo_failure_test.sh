#!/usr/bin/env bash
# When cdc2doris fails, the demo keeps its logs, prints their tail and a path
# that exists (issue 13: it pointed to a log file it had already deleted).
# A stand-in daemon prints a marker and exits 1 right after starting.
# usage: demo_failure_test.sh CDC2DORIS_DEMO
set -euo pipefail
demo=$1
tmp=$(mktemp -d)
kept=""
trap 'rm -rf "$tmp" ${kept:+"$kept"}' EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$tmp/out" ] && sed 's/^/  | /' "$tmp/out" >&2; exit 1; }

marker="fake-cdc2doris: configuration exploded at line 42 ($$)"
cat > "$tmp/fake-cdc2doris" <<FAKE
#!/bin/sh
echo "$marker" >&2
exit 1
FAKE
chmod +x "$tmp/fake-cdc2doris"

set +e
TMPDIR=$tmp "$demo" --records 200 --exit --daemon "$tmp/fake-cdc2doris" > "$tmp/out" 2>&1
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "demo exited $rc, expected 1"
grep -q "demo: FAILED: cdc2doris exited" "$tmp/out" || fail "no failure line"
grep -qF "$marker" "$tmp/out" || fail "the tail of cdc2doris.log was not printed"
kept=$(sed -n 's/^demo: logs and state kept in \(.*\) (remove it when done)$/\1/p' "$tmp/out")
[ -n "$kept" ] || fail "the kept directory is not named"
[ -f "$kept/cdc2doris.log" ] || fail "$kept/cdc2doris.log does not exist"
grep -qF "$marker" "$kept/cdc2doris.log" || fail "the kept cdc2doris.log lacks the daemon's output"
[ -f "$kept/doris-emulator.log" ] || fail "the emulator log was not kept"
[ -s "$kept/kafka-broker.log.tail" ] || fail "the broker's log tail was not saved"
grep -q "last lines of $kept/cdc2doris.log" "$tmp/out" || fail "the printed tail does not name its file"
echo "demo failure path OK: logs kept in $kept"
