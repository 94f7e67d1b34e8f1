#!/bin/sh
# One directed link cut, or let through again, in the network namespace this runs in: every packet
# from FROM is dropped as it arrives, while every other peer (the clients among them) still gets
# through. The operated recipes' cut and mend commands run it where the receiving broker runs:
# containers/link.sh in the container's namespace (nsenter), the Kubernetes recipe in the pod's
# kcts-net sidecar (kubectl exec), the systemd recipe on the VM (ssh; installed there as
# /usr/local/sbin/kcts-link). Needs nft and the right to change the namespace's rules (root or
# CAP_NET_ADMIN). tests/harness/test_operated_target.py runs it in a namespace of its own.
#
#   kcts-link cut FROM_ADDRESS FROM_ID      FROM_ADDRESS: an IPv4 address, or a name resolved here
#   kcts-link mend FROM_ID
set -eu
usage() { echo "usage: kcts-link cut FROM_ADDRESS FROM_ID | kcts-link mend FROM_ID" >&2; exit 2; }
node_id() { case "$1" in '' | *[!0-9]*) echo "kcts-link: node id $1 is not a number" >&2; exit 2 ;; esac; }
# glibc's getent knows ahostsv4; musl's (Alpine, the sidecar) only hosts.
resolve() {
  case "$1" in *[!0-9.]*) ;; *) echo "$1"; return ;; esac
  { getent ahostsv4 "$1" 2>/dev/null || getent hosts "$1" 2>/dev/null || true; } \
    | awk '$1 ~ /^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$/ { print $1; exit }'
}
case "${1:-}" in
  cut)
    [ $# = 3 ] || usage
    node_id "$3"
    ip=$(resolve "$2")
    [ -n "$ip" ] || { echo "kcts-link: $2 resolves to no IPv4 address here" >&2; exit 1; }
    nft add table inet kcts_links
    nft "add chain inet kcts_links input { type filter hook input priority 0; policy accept; }"
    nft add rule inet kcts_links input ip saddr "$ip" drop comment "\"from-$3\""
    ;;
  mend)
    [ $# = 2 ] || usage
    node_id "$2"
    # No table: nothing was cut here, or the namespace (a restarted container's) is a new one.
    nft -a list chain inet kcts_links input 2>/dev/null \
      | sed -n "s/.*comment \"from-$2\" # handle \([0-9]*\)$/\1/p" \
      | while read -r handle; do nft delete rule inet kcts_links input handle "$handle"; done
    ;;
  *) usage ;;
esac
