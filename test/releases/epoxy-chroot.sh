#!/usr/bin/env bash
# The nova 2025.1 (Epoxy) chroot at /srv/trixie ($CLOUDCTL_EPOXY_CHROOT): release-chroot.sh for
# Debian 13, kept under this name for the callers that build or check it.
# Usage: test/releases/epoxy-chroot.sh [--check]
exec bash "$(dirname "${BASH_SOURCE[0]}")/release-chroot.sh" trixie "$@"
