#!/bin/sh
# One directed link between two containers of the recipe's cluster, cut or let through again: TO
# stops hearing FROM (every packet from FROM's address dropped as TO receives it, in TO's network
# namespace), while this machine (the clients, through the published ports) still reaches both.
# The operated profile's cut and mend commands (kafka-4.4.0.toml): the rules are ../kcts-link.sh's,
# which every recipe shares; needs root and nft on this machine.
#
#   sh link.sh cut FROM_CONTAINER TO_CONTAINER FROM_ID
#   sh link.sh mend FROM_CONTAINER TO_CONTAINER FROM_ID
set -eu
op=$1 from=$2 to=$3 id=$4
net=kcts-recipe
pid=$(docker inspect -f '{{.State.Pid}}' "$to")
if [ "$pid" = 0 ]; then
  # Not running: its network namespace, and any rule in it, went with it; a started container has none.
  [ "$op" = mend ] && exit 0
  echo "$to is not running: no link to it to cut" >&2
  exit 1
fi
here=$(dirname "$0")
case "$op" in
  cut)
    ip=$(docker inspect -f "{{(index .NetworkSettings.Networks \"$net\").IPAddress}}" "$from")
    [ -n "$ip" ] || { echo "$from has no address on $net" >&2; exit 1; }
    nsenter -t "$pid" -n /bin/sh "$here/../kcts-link.sh" cut "$ip" "$id"
    ;;
  mend) nsenter -t "$pid" -n /bin/sh "$here/../kcts-link.sh" mend "$id" ;;
  *) echo "usage: $0 cut|mend FROM_CONTAINER TO_CONTAINER FROM_ID" >&2; exit 2 ;;
esac
