#!/usr/bin/env bash
# Builds kcts's base image offline: a Debian bookworm root file system with a JRE 17, made by
# debootstrap from the Debian mirror this machine already uses, then `docker import`ed. No image
# registry is needed.
#
#   docker/base/build.sh [MIRROR]     prints the image's tag: kcts/base:bookworm-jre17-<hash of this file>
#
# An image of that tag already in the engine is reused; one build runs at a time (a lock shared with
# the harness, harness/containers/images.py, which runs this script when it needs the base). A build is
# also saved beside kcts's other downloads (~/.cache/kcts/docker/, as the Maven jars are), so that a
# new engine on this machine loads it in seconds instead of running debootstrap again
# (KCTS_BASE_REBUILD=1: build anyway).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tag="kcts/base:bookworm-jre17-$(sha256sum "$here/build.sh" | cut -c1-12)"
mirror="${1:-${KCTS_DEBIAN_MIRROR:-}}"
command -v docker >/dev/null || { echo "kcts: the docker CLI is missing (apt-get install docker.io)" >&2; exit 2; }
lock="${KCTS_CACHE:-$HOME/.cache/kcts}/docker/base.lock"
mkdir -p "$(dirname "$lock")"
exec 9>"$lock"
flock 9
if docker image inspect "$tag" >/dev/null 2>&1; then echo "$tag"; exit 0; fi
saved="$(dirname "$lock")/${tag//[:\/]/_}.tar"
if [ -z "${KCTS_BASE_REBUILD:-}" ] && [ -s "$saved" ] && docker load -i "$saved" >/dev/null 2>&1 && docker image inspect "$tag" >/dev/null 2>&1; then
  echo "$tag"; exit 0
fi
if [ -z "$mirror" ]; then
  # The first http(s) URI of the machine's own sources: deb822 (URIs:) or one-line (deb URL suite).
  mirror="$(grep -hs -m1 -E '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' | head -1 || true)"
  [ -n "$mirror" ] || mirror="$(grep -hs -E '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
      | awk '{print $2}' | grep -v security | head -1 || true)"
  [ -n "$mirror" ] || mirror="http://deb.debian.org/debian"
fi
command -v debootstrap >/dev/null || { echo "kcts: debootstrap is missing (apt-get install debootstrap)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "kcts: building the base image needs root (debootstrap)" >&2; exit 2; }
work="$(mktemp -d "${TMPDIR:-/tmp}/kcts-base-XXXXXX")"
trap 'rm -rf "$work"' EXIT
debootstrap --variant=minbase --include=openjdk-17-jre-headless bookworm "$work/root" "$mirror" \
  > "$work/debootstrap.log" 2>&1 || { tail -20 "$work/debootstrap.log" >&2; echo "kcts: debootstrap from $mirror failed" >&2; exit 1; }
# Nothing the image needs at run time: package caches and documentation.
rm -rf "$work/root/var/cache/apt/archives/"*.deb "$work/root/var/lib/apt/lists/"* "$work/root/usr/share/doc" \
  "$work/root/usr/share/man"
tar -C "$work/root" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64' \
  --change 'LABEL org.opencontainers.image.title=kcts-base' \
  - "$tag" >/dev/null
docker save -o "$saved.tmp$$" "$tag" && mv "$saved.tmp$$" "$saved" || rm -f "$saved.tmp$$"
# Only the current base is worth keeping: a saved image of an older build script is never loaded again.
find "$(dirname "$lock")" -maxdepth 1 -name 'kcts_base_*.tar' ! -name "$(basename "$saved")" -delete
echo "$tag"
