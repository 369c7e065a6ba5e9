# Shared by the package tests that install cdc2doris on this machine
# (deb_package_test.sh: the dev build as <version>~testbuild with dpkg;
# install_docs_test.sh: the release build with the documents' own commands).
# Source it; it defines functions only. The caller sets `set -euo pipefail`.

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

# Marks a package this machine's tests installed (the docs test installs a
# real version, not ~testbuild); /run is gone after a reboot, and then an
# unmarked package is left alone, which is the safe side.
DEB_TEST_MARKER=/run/cdc2doris-deb-test-installed

deb_status() { dpkg-query -W -f='${Status}' cdc2doris 2>/dev/null || true; }

# dpkg does not wait for its lock; apt runs elsewhere on the machine may hold it.
dpkg_retry() {
  local out i
  for i in $(seq 60); do
    if out=$(dpkg "$@" 2>&1); then echo "$out"; return 0; fi
    case $out in *"lock"*) sleep 1;; *) echo "$out" >&2; return 1;; esac
  done
  echo "$out" >&2; return 1
}

# Root, the one-package-test-at-a-time lock (parallel ctest runs, other
# worktrees would install and purge the same package under each other), and
# a cdc2doris installed by someone else is never touched: skip.
deb_begin() {
  [ "$(id -u)" -eq 0 ] || skip "installing a package needs root"
  exec 9>/run/lock/cdc2doris-deb-package-test.lock
  flock -w "${1:-600}" 9 || fail "another package test held the lock for ${1:-600} s"
  case $(deb_status) in
    "") ;;
    *)
      local v
      v=$(dpkg-query -W -f='${Version}' cdc2doris)
      if [[ $v == *~testbuild ]] || [ -e "$DEB_TEST_MARKER" ]; then
        echo "purging a test package left by an interrupted run ($v)"
        dpkg_retry -P cdc2doris >/dev/null
        rm -f "$DEB_TEST_MARKER"
      else
        skip "cdc2doris $v is installed on this machine; not touching it"
      fi;;
  esac
}

# For the EXIT trap: whatever a failed step left installed goes again.
deb_end() {
  case $(deb_status) in
    *installed*|*config-files*|*half*|*unpacked*) dpkg_retry -P cdc2doris >/dev/null || return 1;;
  esac
  rm -f "$DEB_TEST_MARKER"
  [ -z "${deb_made_state:-}" ] || rm -rf /var/lib/cdc2doris
}

# The installed package works: its libraries resolve, `cdc2doris version`
# names VERSION and COMMIT, `check` passes on the installed example without
# printing a secret, and systemd-analyze accepts the installed unit.
deb_verify_installed() {
  local version=$1 commit=$2 out
  [ "$(deb_status)" = "install ok installed" ] || fail "package status after install: $(deb_status)"
  ! ldd /usr/bin/cdc2doris | grep -q "not found" || fail "missing shared libraries: $(ldd /usr/bin/cdc2doris | grep 'not found')"
  out=$(/usr/bin/cdc2doris version) || fail "cdc2doris version failed"
  [ "$out" = "cdc2doris $version (commit $commit)" ] || fail "version printed '$out', expected 'cdc2doris $version (commit $commit)'"
  out=$(DORIS_PASSWORD=example-doris-password KAFKA_USERNAME=example-user KAFKA_PASSWORD=example-kafka-password \
        /usr/bin/cdc2doris check --config /etc/cdc2doris/cdc2doris.yaml.example 2>&1) \
    || fail "check of the installed example failed: $out"
  [[ $out == *"is valid"* ]] || fail "unexpected check output: $out"
  [[ $out == *example-doris-password* || $out == *example-kafka-password* ]] && fail "check printed a secret"
  out=$(systemd-analyze verify --man=no /lib/systemd/system/cdc2doris.service 2>&1) \
    || fail "systemd-analyze verify of the installed unit: $out"
  [ -z "$out" ] || fail "systemd-analyze verify warned about the installed unit: $out"
}

# Gives the purge a checkpoint state to delete when there is none (a test
# must not delete a real one), then checks what `PURGE_COMMAND...` left.
deb_verify_purge() {
  if [ ! -e /var/lib/cdc2doris ]; then
    deb_made_state=1
    mkdir -p /var/lib/cdc2doris && touch /var/lib/cdc2doris/checkpoint-marker
  fi
  "$@" || fail "$* failed"
  [ -z "$(deb_status)" ] || [[ $(deb_status) == *not-installed* ]] || fail "status after purge: $(deb_status)"
  rm -f "$DEB_TEST_MARKER"
  [ ! -e /usr/bin/cdc2doris ] || fail "purge left /usr/bin/cdc2doris"
  [ ! -e /etc/cdc2doris/cdc2doris.yaml.example ] || fail "purge left the example config"
  [ ! -e /lib/systemd/system/cdc2doris.service ] || fail "purge left the systemd unit"
  if [ -n "${deb_made_state:-}" ]; then
    [ ! -e /var/lib/cdc2doris ] || fail "purge left /var/lib/cdc2doris"
  fi
}
