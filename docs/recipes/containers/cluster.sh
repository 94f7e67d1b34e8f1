#!/bin/sh
# Apache Kafka 4.4.0 in containers started outside kcts: one KRaft controller and three brokers on a
# network of their own, each broker reachable from this machine only, on 127.0.0.1:29092-29094.
# Plain `docker run` (no compose needed); kcts judges it as an operated target through
# docs/recipes/containers/kafka-4.4.0.toml, whose commands are docker stop/start/kill/pause/unpause
# and docker network disconnect/connect.
#
#   kcts image --kafka-version 4.4.0             # builds kcts/kafka:4.4.0 offline (or set KCTS_KAFKA_IMAGE)
#   sh docs/recipes/containers/cluster.sh up      # start it, and wait until the three brokers answer
#   kcts run --target-profile docs/recipes/containers/kafka-4.4.0.toml -m "not heavy"
#   sh docs/recipes/containers/cluster.sh status  # every container running, none paused, all connected
#   sh docs/recipes/containers/cluster.sh down    # remove the containers and the network
#
# The settings are the docker backend's (harness/cluster/docker.py), in the apache/kafka image's
# environment convention (KAFKA_<NAME>: '.' as '_', '-' as '__', '_' as '___').
set -eu
image=${KCTS_KAFKA_IMAGE:-kcts/kafka:4.4.0}
net=kcts-recipe
prefix=kcts-recipe
first_port=${KCTS_RECIPE_PORT:-29092}
label=kcts.recipe=containers

here=$(cd "$(dirname "$0")" && pwd)

up() {
  docker network inspect "$net" >/dev/null 2>&1 || docker network create --label "$label" "$net" >/dev/null
  docker run -d --name "$prefix-controller" --hostname controller --network "$net" --network-alias controller \
    --label "$label" --env-file "$here/node.env" \
    -e KAFKA_PROCESS_ROLES=controller -e KAFKA_NODE_ID=1000 \
    -e KAFKA_LISTENERS=CONTROLLER://0.0.0.0:9094 -e KAFKA_LISTENER_SECURITY_PROTOCOL_MAP=CONTROLLER:PLAINTEXT \
    -e KAFKA_BROKER_SESSION_TIMEOUT_MS=3000 \
    "$image" >/dev/null
  for id in 1 2 3; do
    port=$((first_port + id - 1))
    docker run -d --name "$prefix-broker-$id" --hostname "broker-$id" --network "$net" --network-alias "broker-$id" \
      --label "$label" -p "127.0.0.1:$port:9092" --env-file "$here/node.env" --env-file "$here/broker.env" \
      -e KAFKA_NODE_ID="$id" -e KAFKA_ADVERTISED_LISTENERS="CLIENT://127.0.0.1:$port,INTERNAL://broker-$id:9093" \
      "$image" >/dev/null
  done
  # Ready when every broker has logged its start (about 20 s on 2 cores).
  tries=0
  for id in 1 2 3; do
    until docker logs "$prefix-broker-$id" 2>&1 | grep -q "Kafka Server started"; do
      tries=$((tries + 1))
      if [ "$tries" -gt 240 ]; then
        echo "broker $id did not start; its last lines:" >&2
        docker logs --tail 20 "$prefix-broker-$id" >&2
        exit 1
      fi
      sleep 0.5
    done
  done
  echo "Kafka 4.4.0: brokers 1-3 at 127.0.0.1:$first_port-$((first_port + 2))"
}

status() {
  docker ps -a --filter "label=$label" --format '{{.Names}}\t{{.Status}}\t{{.Networks}}'
}

down() {
  docker ps -aq --filter "label=$label" | xargs -r docker rm -f -v >/dev/null
  docker network rm "$net" >/dev/null 2>&1 || true
}

case "${1:-}" in
  up) up ;;
  status) status ;;
  down) down ;;
  *) echo "usage: $0 up|status|down" >&2; exit 2 ;;
esac
