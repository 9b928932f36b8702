#!/usr/bin/env bash
# Creates (once) a Debian chroot holding one release's real nova and placement code and nova's test
# packages, so tests can build that release's schemas with its own nova-manage / placement-manage and
# play scenarios with its own functional harness.
#
#   suite   release   nova / placement   where (env to move it)
#   trixie  2025.1    31 / 13            /srv/trixie  (CLOUDCTL_EPOXY_CHROOT)
#   forky   2026.1    33 / 15            /srv/forky   (CLOUDCTL_FORKY_CHROOT)
#   sid     2026.2    34 / 16            /srv/sid     (CLOUDCTL_SID_CHROOT)
#
# Idempotent: a finished chroot carries a marker and is left alone; a half-built one is redone.
# Several suites can be built at once (one lock per chroot).
# Usage: test/releases/release-chroot.sh SUITE [--check]   (--check: exit 0 if ready, 1 if not; changes nothing)
set -euo pipefail

SUITE="${1:-}"
case "$SUITE" in
  # The trixie markers keep the names epoxy-chroot.sh gave them, so chroots built before stay valid.
  trixie) ROOT="${CLOUDCTL_EPOXY_CHROOT:-/srv/trixie}"; TAG=epoxy; RELEASE="2025.1 (nova 31, placement 13)" ;;
  forky)  ROOT="${CLOUDCTL_FORKY_CHROOT:-/srv/forky}";  TAG=forky; RELEASE="2026.1 (nova 33, placement 15)" ;;
  sid)    ROOT="${CLOUDCTL_SID_CHROOT:-/srv/sid}";      TAG=sid;   RELEASE="2026.2 (nova 34, placement 16)" ;;
  *) echo "release-chroot: unknown suite '${SUITE}' (trixie, forky or sid)" >&2
     echo "usage: test/releases/release-chroot.sh trixie|forky|sid [--check]" >&2; exit 2 ;;
esac
shift

READY="$ROOT/.cloudctl-$TAG-ready"
BASE="$ROOT/.cloudctl-base-ready"
PKGS="python3-nova python3-placement nova-common placement-common python3-pymysql"
# nova's own unit tests and functional harness (test/compare-nova recorders, test/realnova plays).
# The marker holds the list, so a chroot built before a package was added gets it on the next run.
TEST_PKGS="python3-oslotest python3-ddt python3-testscenarios python3-fixtures python3-testtools python3-wsgi-intercept"
TEST_READY="$ROOT/.cloudctl-$TAG-test-pkgs"

log() { printf '== release-chroot %s: %s\n' "$SUITE" "$*"; }

test_ready() { [ -f "$TEST_READY" ] && [ "$(cat "$TEST_READY")" = "$TEST_PKGS" ]; }

if [ "${1:-}" = "--check" ]; then
  [ -f "$READY" ] && test_ready && exit 0 || exit 1
fi
if [ -f "$READY" ] && test_ready; then log "ready at $ROOT"; exit 0; fi
if [ "$(id -u)" -ne 0 ]; then echo "release-chroot: must run as root (debootstrap, chroot, mount)" >&2; exit 2; fi

# Two CI jobs on one machine must not build the same chroot at once.
mkdir -p "$(dirname "$ROOT")"
exec 9>"$ROOT.lock"
flock 9
if [ -f "$READY" ] && test_ready; then log "ready at $ROOT (built by a concurrent run)"; exit 0; fi

# shellcheck source=../support/debian-mirror.sh
. "$(dirname "${BASH_SOURCE[0]}")/../support/debian-mirror.sh"

cleanup() {
  if mountpoint -q "$ROOT/proc" 2>/dev/null; then umount "$ROOT/proc" || umount -l "$ROOT/proc" || true; fi
}
trap cleanup EXIT

install_debootstrap() {
  command -v debootstrap >/dev/null 2>&1 && return 0
  log "installing debootstrap"
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq debootstrap >/dev/null
}

if [ ! -f "$BASE" ]; then
  install_debootstrap
  if [ -e "$ROOT" ]; then
    log "removing an unfinished chroot at $ROOT"
    cleanup
    rm -rf --one-file-system "$ROOT"
  fi
  MIRROR=$(mirror)
  # Debian 12's debootstrap has no forky script; its sid script bootstraps any suite of that shape.
  SCRIPT=""
  [ -f "/usr/share/debootstrap/scripts/$SUITE" ] || SCRIPT=/usr/share/debootstrap/scripts/sid
  log "debootstrap $SUITE from $MIRROR (a few minutes)"
  # shellcheck disable=SC2086
  debootstrap --variant=minbase "$SUITE" "$ROOT" "$MIRROR" $SCRIPT
  # Packages must not try to start services inside the chroot.
  printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d"
  chmod +x "$ROOT/usr/sbin/policy-rc.d"
  touch "$BASE"
fi

# testing's Release file can be past its Valid-Until date on the mirror (it is refreshed lazily);
# without this the chroot's apt refuses every later update.
printf 'Acquire::Check-Valid-Until "false";\n' >"$ROOT/etc/apt/apt.conf.d/99cloudctl-valid-until"

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
log "installing nova and placement of $RELEASE in the chroot"
chroot "$ROOT" env DEBIAN_FRONTEND=noninteractive bash -c \
  "apt-get -o DPkg::Lock::Timeout=600 update -qq && apt-get -o DPkg::Lock::Timeout=600 install -y -qq $PKGS >/dev/null"
cleanup
chroot "$ROOT" nova-manage --version >/dev/null 2>&1 || { echo "release-chroot: nova-manage does not run in $ROOT" >&2; exit 1; }
touch "$READY"
install_test_pkgs
log "ready at $ROOT"
