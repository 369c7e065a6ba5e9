#!/usr/bin/env bash
# Every config in deploy/examples passes `cdc2doris check --config FILE`, with
# the environment variables the examples reference set to harmless values.
# Negative controls: an unknown key and a missing ${VAR} must be rejected (exit 2).
set -euo pipefail
examples=$1 binary=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

printf 's3cr3t-from-file\n' > "$tmp/doris-password"
export DORIS_PASSWORD=example-doris-password KAFKA_USERNAME=cdc2doris KAFKA_PASSWORD=example-kafka-password
export DORIS_PASSWORD_FILE="$tmp/doris-password" POD_NAME=cdc2doris-0

n=0
for f in "$examples"/*.yaml; do
  out=$("$binary" check --config "$f" 2>&1) || fail "$f: cdc2doris check failed: $out"
  case $out in *"is valid"*) ;; *) fail "$f: unexpected check output: $out";; esac
  for secret in "$DORIS_PASSWORD" "$KAFKA_PASSWORD" s3cr3t-from-file; do
    case $out in *"$secret"*) fail "$f: check printed a secret";; esac
  done
  echo "ok: $(basename "$f")"
  n=$((n + 1))
done
[ "$n" -ge 1 ] || fail "no example configs in $examples"

# Negative controls: check really validates.
main="$examples/cdc2doris.yaml"
[ -f "$main" ] || fail "deploy/examples/cdc2doris.yaml is missing"
{ cat "$main"; printf 'admin:\n  listen_typo: 1\n'; } > "$tmp/unknown-key.yaml"
set +e
"$binary" check --config "$tmp/unknown-key.yaml" >/dev/null 2>&1; rc=$?
env -u DORIS_PASSWORD "$binary" check --config "$main" > "$tmp/no-env.out" 2>&1; rc_env=$?
set -e
[ "$rc" -eq 2 ] || fail "an unknown key was not rejected with exit 2 (got $rc)"
[ "$rc_env" -eq 2 ] || fail "a missing \${DORIS_PASSWORD} was not rejected with exit 2 (got $rc_env)"
grep -q DORIS_PASSWORD "$tmp/no-env.out" || fail "the missing-variable error does not name DORIS_PASSWORD"
echo "$n example config(s) pass cdc2doris check"
