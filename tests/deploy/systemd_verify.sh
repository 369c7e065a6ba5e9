#!/usr/bin/env bash
# deploy/systemd/cdc2doris.service: `systemd-analyze verify` must accept it
# without a single warning, and the properties the daemon relies on are set.
# verify needs ExecStart's binary to exist, so a copy of the unit points at the
# freshly built binary; everything else is verified as shipped.
set -euo pipefail
unit=$1 binary=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

[ -x "$binary" ] || fail "no built binary at $binary"
grep -q '^ExecStart=/usr/bin/cdc2doris run --config /etc/cdc2doris/cdc2doris.yaml$' "$unit" \
  || fail "ExecStart must be '/usr/bin/cdc2doris run --config /etc/cdc2doris/cdc2doris.yaml'"
sed "s#/usr/bin/cdc2doris#${binary}#g" "$unit" > "$tmp/cdc2doris.service"
out=$(systemd-analyze verify --man=no "$tmp/cdc2doris.service" 2>&1) || fail "systemd-analyze verify failed: $out"
[ -z "$out" ] || fail "systemd-analyze verify warned: $out"

# Negative control: the same verify rejects a unit whose binary is missing.
sed "s#/usr/bin/cdc2doris#${tmp}/no-such-binary#g" "$unit" > "$tmp/broken.service"
if systemd-analyze verify --man=no "$tmp/broken.service" >/dev/null 2>&1; then
  fail "systemd-analyze verify accepted a unit with a missing ExecStart binary"
fi

# The properties cdc2doris relies on (last assignment wins, as in systemd).
prop() { sed -n "s/^$1=//p" "$unit" | tail -1; }
require() { [ "$(prop "$1")" = "$2" ] || fail "$1 must be '$2', is '$(prop "$1")'"; }
require Type notify
require StateDirectory cdc2doris
require ProtectSystem strict
require NoNewPrivileges yes
require Restart on-failure
[ "$(prop DynamicUser)" = yes ] || [ -n "$(prop User)" ] || fail "needs DynamicUser=yes or User="
# Exit 2 (configuration error) must not be restarted into a loop.
grep -Eq '^RestartPreventExitStatus=(.* )?2( .*)?$' "$unit" || fail "RestartPreventExitStatus must include 2"
to_seconds() { local v=$1; case $v in *min) echo $(( ${v%min} * 60 ));; *s) echo "${v%s}";; *) echo "$v";; esac; }
stop=$(to_seconds "$(prop TimeoutStopSec)")
# delivery.shutdown_deadline defaults to 30s; the Kafka close may add 10s.
[ "$stop" -gt 40 ] || fail "TimeoutStopSec ($stop s) must exceed the 30 s shutdown deadline + 10 s Kafka close"
wd=$(to_seconds "$(prop WatchdogSec)")
[ "$wd" -ge 2 ] || fail "WatchdogSec must be set (the daemon pings at half of it)"

# Hardening that must stay.
for d in ProtectHome=yes PrivateTmp=yes PrivateDevices=yes ProtectKernelTunables=yes ProtectKernelModules=yes \
         ProtectControlGroups=yes RestrictSUIDSGID=yes LockPersonality=yes MemoryDenyWriteExecute=yes \
         CapabilityBoundingSet=; do
  grep -qx "$d" "$unit" || fail "missing hardening: $d"
done
echo "systemd unit OK: verified by systemd-analyze $(systemd-analyze --version | head -1 | cut -d' ' -f2)"
