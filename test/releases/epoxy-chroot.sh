#!/usr/bin/env bash
# Creates (once) a Debian 13 chroot holding the real nova 2025.1 (Epoxy) and placement 13 code,
# so tests can build real Epoxy schemas with Epoxy's own nova-manage / placement-manage.
# Idempotent: a finished chroot carries a marker and is left alone; a half-built one is redone.
# Usage: test/releases/epoxy-chroot.sh [--check]   (--check: exit 0 if ready, 1 if not; changes nothing)
set -euo pipefail

ROOT="${CLOUDCTL_EPOXY_CHROOT:-/srv/trixie}"
READY="$ROOT/.cloudctl-epoxy-ready"
BASE="$ROOT/.cloudctl-base-ready"
PKGS="python3-nova python3-placement nova-common placement-common python3-pymysql"
# nova's own unit tests and functional harness (test/compare-nova recorders, test/realnova plays).
# The marker holds the list, so a chroot built before a package was added gets it on the next run.
TEST_PKGS="python3-oslotest python3-ddt python3-testscenarios python3-fixtures python3-testtools python3-wsgi-intercept"
TEST_READY="$ROOT/.cloudctl-epoxy-test-pkgs"

log() { printf '== epoxy-chroot: %s\n' "$*"; }

test_ready() { [ -f "$TEST_READY" ] && [ "$(cat "$TEST_READY")" = "$TEST_PKGS" ]; }

if [ "${1:-}" = "--check" ]; then
  [ -f "$READY" ] && test_ready && exit 0 || exit 1
fi
if [ -f "$READY" ] && test_ready; then log "ready at $ROOT"; exit 0; fi
if [ "$(id -u)" -ne 0 ]; then echo "epoxy-chroot: must run as root (debootstrap, chroot, mount)" >&2; exit 2; fi

# Two CI jobs on one machine must not build the same chroot at once.
mkdir -p "$(dirname "$ROOT")"
exec 9>"$ROOT.lock"
flock 9
if [ -f "$READY" ] && test_ready; then log "ready at $ROOT (built by a concurrent run)"; exit 0; fi

mirror() {
  # The host's own Debian mirror (deb822 sources first, then the classic list).
  local m=""
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    m=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
  fi
  if [ -z "$m" ] && [ -f /etc/apt/sources.list ]; then
    m=$(awk '$1=="deb" && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list)
  fi
  echo "${m:-http://deb.debian.org/debian}"
}

cleanup() {
  if mountpoint -q "$ROOT/proc" 2>/dev/null; then umount "$ROOT/proc" || umount -l "$ROOT/proc" || true; fi
}
trap cleanup EXIT

if [ ! -f "$BASE" ]; then
  if ! command -v debootstrap >/dev/null 2>&1; then
    log "installing debootstrap"
    export DEBIAN_FRONTEND=noninteractive
    apt-get -o DPkg::Lock::Timeout=600 update -qq
    apt-get -o DPkg::Lock::Timeout=600 install -y -qq debootstrap >/dev/null
  fi
  if [ -e "$ROOT" ]; then
    log "removing an unfinished chroot at $ROOT"
    cleanup
    rm -rf --one-file-system "$ROOT"
  fi
  MIRROR=$(mirror)
  log "debootstrap trixie from $MIRROR (a few minutes)"
  debootstrap --variant=minbase trixie "$ROOT" "$MIRROR"
  # Packages must not try to start services inside the chroot.
  printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d"
  chmod +x "$ROOT/usr/sbin/policy-rc.d"
  touch "$BASE"
fi

install_test_pkgs() {
  test_ready && return 0
  log "installing nova's test dependencies in the chroot"
  mountpoint -q "$ROOT/proc" || mount -t proc proc "$ROOT/proc"
  chroot "$ROOT" env DEBIAN_FRONTEND=noninteractive bash -c \
    "apt-get -o DPkg::Lock::Timeout=600 install -y -qq $TEST_PKGS >/dev/null \
     || { apt-get -o DPkg::Lock::Timeout=600 update -qq && apt-get -o DPkg::Lock::Timeout=600 install -y -qq $TEST_PKGS >/dev/null; }"
  cleanup
  # nova's functional API fixture looks for api-paste.ini beside its package.
  mkdir -p "$ROOT/usr/lib/python3/dist-packages/etc/nova"
  ln -sf /etc/nova/api-paste.ini "$ROOT/usr/lib/python3/dist-packages/etc/nova/api-paste.ini"
  printf '%s' "$TEST_PKGS" >"$TEST_READY"
}

if [ -f "$READY" ]; then
  # Built before the test packages were part of it: add them only.
  install_test_pkgs
  log "ready at $ROOT"
  exit 0
fi

# The packages' debconf would otherwise try to create databases of their own.
printf 'nova-common nova/configure_db boolean false\nplacement-common placement/configure_db boolean false\n' \
  | chroot "$ROOT" debconf-set-selections
mountpoint -q "$ROOT/proc" || mount -t proc proc "$ROOT/proc"
log "installing nova 2025.1 and placement 13 in the chroot"
chroot "$ROOT" env DEBIAN_FRONTEND=noninteractive bash -c \
  "apt-get -o DPkg::Lock::Timeout=600 update -qq && apt-get -o DPkg::Lock::Timeout=600 install -y -qq $PKGS >/dev/null"
cleanup
chroot "$ROOT" nova-manage --version >/dev/null 2>&1 || { echo "epoxy-chroot: nova-manage does not run in $ROOT" >&2; exit 1; }
touch "$READY"
install_test_pkgs
log "ready at $ROOT"
