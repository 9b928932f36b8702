#!/usr/bin/env bash
# Creates (once) a bare Debian 12 chroot, `debootstrap --variant=minbase bookworm`: no Node.js, no
# nodejs package, what a fresh control host has. test/install/install.test.ts installs the release
# .deb and unpacks the tarball in a throwaway overlay of it, so this tree is never changed.
# Idempotent: a finished chroot carries a marker and is left alone; a half-built one is redone.
# Usage: test/install/bookworm-chroot.sh [--check]   (--check: exit 0 if ready, 1 if not; changes nothing)
set -euo pipefail

ROOT="${CLOUDCTL_BOOKWORM_CHROOT:-/srv/bookworm-min}"
READY="$ROOT/.cloudctl-bookworm-ready"

log() { printf '== bookworm-chroot: %s\n' "$*"; }

if [ "${1:-}" = "--check" ]; then [ -f "$READY" ] && exit 0 || exit 1; fi
if [ -f "$READY" ]; then log "ready at $ROOT"; exit 0; fi
if [ "$(id -u)" -ne 0 ]; then echo "bookworm-chroot: must run as root (debootstrap)" >&2; exit 2; fi

# Two CI jobs on one machine must not build the same chroot at once.
mkdir -p "$(dirname "$ROOT")"
exec 9>"$ROOT.lock"
flock 9
if [ -f "$READY" ]; then log "ready at $ROOT (built by a concurrent run)"; exit 0; fi

# shellcheck source=../support/debian-mirror.sh
. "$(dirname "${BASH_SOURCE[0]}")/../support/debian-mirror.sh"

if ! command -v debootstrap >/dev/null 2>&1; then
  log "installing debootstrap"
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq debootstrap >/dev/null
fi
if [ -e "$ROOT" ]; then
  log "removing an unfinished chroot at $ROOT"
  rm -rf --one-file-system "$ROOT"
fi
MIRROR=$(mirror)
log "debootstrap --variant=minbase bookworm from $MIRROR (a few minutes)"
debootstrap --variant=minbase bookworm "$ROOT" "$MIRROR" >/dev/null
# The point of the chroot: no Node.js of its own.
if chroot "$ROOT" sh -c 'command -v node || command -v nodejs' >/dev/null 2>&1; then
  echo "bookworm-chroot: $ROOT has a node" >&2
  exit 1
fi
touch "$READY"
log "ready at $ROOT"
