#!/usr/bin/env bash
# Database servers the topology suite runs besides the host's MariaDB 10.11 (test/topology/servers.test.ts):
#   mysql    MySQL from Debian sid, in its own minbase chroot /srv/sid-mysql (Canonical's charms run MySQL);
#   mariadb  MariaDB 11.8 from Debian 13, installed into the nova 2025.1 chroot /srv/trixie
#            (built by test/releases/epoxy-chroot.sh, which this script runs first).
# Only the packages are installed: the test initialises a datadir of its own and starts the server
# binary through chroot(8) on a port of its own. Idempotent: a finished server carries a marker
# (holding its version) and is left alone; an unfinished one is redone.
# Usage: test/topology/server-chroot.sh [mysql|mariadb|all] [--check]   (--check: exit 0 if ready, 1 if not)
set -euo pipefail

WHICH="${1:-all}"
CHECK="${2:-}"
if [ "$WHICH" = "--check" ]; then WHICH=all; CHECK=--check; fi
MYSQL_ROOT="${CLOUDCTL_MYSQL_CHROOT:-/srv/sid-mysql}"
MYSQL_READY="$MYSQL_ROOT/.cloudctl-mysql-ready"
MYSQL_BASE="$MYSQL_ROOT/.cloudctl-base-ready"
MARIADB_ROOT="${CLOUDCTL_EPOXY_CHROOT:-/srv/trixie}"
MARIADB_READY="$MARIADB_ROOT/.cloudctl-mariadb-ready"
HERE="$(cd "$(dirname "$0")" && pwd)"

log() { printf '== server-chroot: %s\n' "$*"; }

case "$WHICH" in mysql|mariadb|all) ;; *) echo "usage: $0 [mysql|mariadb|all] [--check]" >&2; exit 2 ;; esac
want() { [ "$WHICH" = all ] || [ "$WHICH" = "$1" ]; }

if [ "$CHECK" = "--check" ]; then
  ok=0
  if want mysql && [ ! -f "$MYSQL_READY" ]; then ok=1; fi
  if want mariadb && [ ! -f "$MARIADB_READY" ]; then ok=1; fi
  exit $ok
fi
if [ "$(id -u)" -ne 0 ]; then echo "server-chroot: must run as root (debootstrap, chroot, mount)" >&2; exit 2; fi

# shellcheck source=../support/debian-mirror.sh
. "$(dirname "${BASH_SOURCE[0]}")/../support/debian-mirror.sh"

MOUNTED=()
cleanup() {
  local m
  for m in "${MOUNTED[@]}"; do
    if mountpoint -q "$m" 2>/dev/null; then umount "$m" || umount -l "$m" || true; fi
  done
}
trap cleanup EXIT
mount_proc() {
  mountpoint -q "$1/proc" || { mount -t proc proc "$1/proc"; MOUNTED+=("$1/proc"); }
}

# No service may start inside a chroot: postinst scripts ask policy-rc.d first.
no_services() {
  printf '#!/bin/sh\nexit 101\n' >"$1/usr/sbin/policy-rc.d"
  chmod +x "$1/usr/sbin/policy-rc.d"
}

apt_in() {
  local root="$1"; shift
  chroot "$root" env DEBIAN_FRONTEND=noninteractive bash -c \
    "apt-get -o DPkg::Lock::Timeout=600 -o Dpkg::Use-Pty=0 install -y -qq --no-install-recommends $* >/dev/null \
     || { apt-get -o DPkg::Lock::Timeout=600 update -qq && apt-get -o DPkg::Lock::Timeout=600 -o Dpkg::Use-Pty=0 install -y -qq --no-install-recommends $* >/dev/null; }"
}

build_mysql() {
  [ -f "$MYSQL_READY" ] && { log "MySQL $(cat "$MYSQL_READY") ready at $MYSQL_ROOT"; return 0; }
  mkdir -p "$(dirname "$MYSQL_ROOT")"
  exec 8>"$MYSQL_ROOT.lock"
  flock 8
  [ -f "$MYSQL_READY" ] && { log "MySQL ready at $MYSQL_ROOT (built by a concurrent run)"; exec 8>&-; return 0; }
  if [ ! -f "$MYSQL_BASE" ]; then
    if ! command -v debootstrap >/dev/null 2>&1; then
      log "installing debootstrap"
      DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -qq
      DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq debootstrap >/dev/null
    fi
    if [ -e "$MYSQL_ROOT" ]; then
      log "removing an unfinished chroot at $MYSQL_ROOT"
      rm -rf --one-file-system "$MYSQL_ROOT"
    fi
    log "debootstrap sid (minbase) from $(mirror)"
    debootstrap --variant=minbase sid "$MYSQL_ROOT" "$(mirror)" >/dev/null
    no_services "$MYSQL_ROOT"
    touch "$MYSQL_BASE"
  fi
  mount_proc "$MYSQL_ROOT"
  # sid's Release file carries a Valid-Until that a snapshot mirror (or a machine clock ahead of it) has passed.
  echo 'Acquire::Check-Valid-Until "false";' >"$MYSQL_ROOT/etc/apt/apt.conf.d/99cloudctl-valid-until"
  chroot "$MYSQL_ROOT" apt-get -o DPkg::Lock::Timeout=600 update -qq
  # Debian sid carries Oracle's MySQL as mysql-server; mysql-server-core holds mysqld (the server's
  # own postinst, which initialises /var/lib/mysql, is not needed: the test makes its own datadir).
  local candidate
  candidate=$(chroot "$MYSQL_ROOT" apt-cache policy mysql-server-core | awk '/Candidate:/ {print $2}')
  case "$candidate" in ""|"(none)") echo "server-chroot: Debian sid has no mysql-server-core (apt-cache policy)" >&2; exit 1 ;; esac
  log "installing mysql-server-core $candidate and mysql-client in $MYSQL_ROOT"
  apt_in "$MYSQL_ROOT" mysql-server-core mysql-client
  local v
  v=$(chroot "$MYSQL_ROOT" /usr/sbin/mysqld --version) || { echo "server-chroot: mysqld does not run in $MYSQL_ROOT" >&2; exit 1; }
  printf '%s\n' "$v" >"$MYSQL_READY"
  cleanup
  log "ready: $v"
  exec 8>&-
}

build_mariadb() {
  [ -f "$MARIADB_READY" ] && { log "MariaDB $(cat "$MARIADB_READY") ready in $MARIADB_ROOT"; return 0; }
  # The chroot itself belongs to the nova 2025.1 releases suite; its script builds it (or waits for it).
  bash "$HERE/../releases/epoxy-chroot.sh"
  exec 7>"$MARIADB_ROOT-mariadb.lock"
  flock 7
  [ -f "$MARIADB_READY" ] && { log "MariaDB ready in $MARIADB_ROOT (installed by a concurrent run)"; exec 7>&-; return 0; }
  [ -x "$MARIADB_ROOT/usr/sbin/policy-rc.d" ] || no_services "$MARIADB_ROOT"
  mount_proc "$MARIADB_ROOT"
  log "installing mariadb-server in $MARIADB_ROOT"
  apt_in "$MARIADB_ROOT" mariadb-server mariadb-client
  local v
  v=$(chroot "$MARIADB_ROOT" /usr/sbin/mariadbd --version) || { echo "server-chroot: mariadbd does not run in $MARIADB_ROOT" >&2; exit 1; }
  printf '%s\n' "$v" >"$MARIADB_READY"
  cleanup
  log "ready: $v"
  exec 7>&-
}

if want mysql; then build_mysql; fi
if want mariadb; then build_mariadb; fi
