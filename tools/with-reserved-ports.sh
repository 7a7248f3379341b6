#!/usr/bin/env bash
# Runs a command with port ranges kept out of Linux's ephemeral range, then restores the previous reservation. The
# unit suite's real-nginx tests listen on fixed loopback ports, some inside the ephemeral range (32768-60999): under
# load the kernel could give one of them to an outgoing connection first, and nginx's bind would fail.
# Usage: tools/with-reserved-ports.sh <ranges, e.g. 31900-33999> <command...>
set -uo pipefail
ranges="$1"
shift
RESERVED=/proc/sys/net/ipv4/ip_local_reserved_ports
before=""
if [[ -w $RESERVED ]]; then
  before=$(cat "$RESERVED")
  echo "${before:+$before,}$ranges" > "$RESERVED" || true
fi
"$@"
rc=$?
[[ -w $RESERVED ]] && { echo "$before" > "$RESERVED" || true; }
exit $rc
