#!/usr/bin/env bash
# Lays out the build context of docker/Dockerfile.binary: one static localsqs binary per
# architecture, and the directories the image needs, with their modes. The release workflow
# (.github/workflows/release.yml) calls it for the multi-arch image, scripts/image-test.sh for
# the image it runs under podman.
#
#   scripts/image-context.sh OUT ARCH=BINARY [ARCH=BINARY ...]
#   scripts/image-context.sh ctx amd64=target/static/x86_64-unknown-linux-gnu/release/localsqs
#
# ARCH is Docker's name for it (amd64, arm64): the Dockerfile copies ${TARGETARCH}/localsqs.
set -euo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 OUT ARCH=BINARY [ARCH=BINARY ...]" >&2
  exit 2
fi
out=$1
shift
rm -rf "$out"
mkdir -p "$out/rootfs"
# /data: the volume's mount point, which the image gives to the server's user (65534);
# /tmp: TMPDIR, writable by anyone, sticky.
install -d -m 0755 "$out/rootfs/data"
install -d -m 1777 "$out/rootfs/tmp"
for pair in "$@"; do
  arch=${pair%%=*}
  bin=${pair#*=}
  if [[ $arch == "$pair" || -z $arch || ! -f $bin ]]; then
    echo "$0: '$pair' is not ARCH=BINARY with an existing binary" >&2
    exit 2
  fi
  install -D -m 0755 "$bin" "$out/$arch/localsqs"
done
echo "== image context: $out ($(cd "$out" && echo */localsqs))"
