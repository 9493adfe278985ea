#!/bin/sh
# The image's entrypoint (under tini): `archipelago serve` with the arguments given.
#
# With RAY_ADDRESS set to a Ray cluster's GCS address (HOST:PORT, e.g. the KubeRay head service
# archipelago-ray-head-svc:6379) this container first joins that cluster as a Ray node of its own with
# no CPUs, so that the gateway is a Ray driver inside the cluster: a driver needs a raylet on its own
# host, and Ray Client (ray://) is ~4x slower. RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER must be 1 (the image
# sets it): at 0 the node and the driver take 127.0.0.1 as their address and cannot find each other.
#
# Any other first argument than `serve` or an option runs that command instead (`bash`, `archipelago
# create …`, `ray status`); KubeRay replaces this entrypoint with its own `ray start` command anyway.
set -eu

if [ "$#" -gt 0 ]; then
  case "$1" in
    serve) shift ;;
    -*) ;;
    *) exec "$@" ;;
  esac
fi

case "${RAY_ADDRESS:-}" in
  "" | auto | local | ray://*) ;;
  *)
    # --object-store-memory: the gateway stores nothing in Ray's object store (Ray's minimum is 75 MB).
    # --metrics-export-port: this node's own Ray metrics on a known port (the container port named
    # ray-metrics, scraped by the PodMonitor archipelago-gateway-ray); ARCHIPELAGO_RAY_METRICS_PORT
    # changes it, as in embedded mode.
    ray start --address="$RAY_ADDRESS" --num-cpus=0 --num-gpus=0 \
      --object-store-memory=100000000 --disable-usage-stats \
      --metrics-export-port="${ARCHIPELAGO_RAY_METRICS_PORT:-8090}"
    ;;
esac

exec archipelago serve "$@"
