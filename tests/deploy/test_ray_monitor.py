"""Ray's own metrics are scraped on Kubernetes (deploy/k8s/base/monitoring.yaml): the PodMonitor
archipelago-ray selects every pod of the RayCluster — the head and each worker group — on the container
port that is Ray's metrics export port there (KubeRay's ``metrics-export-port``, 8080 unless set)."""

from __future__ import annotations

import re

import pytest

from tests.deploy.test_manifests import K8S, OVERLAYS, Doc, find, labels_match, render

KUBERAY_METRICS_PORT = "8080"  # KubeRay's default metrics-export-port


def node_specs(cluster: Doc) -> list[tuple[str, Doc]]:
    """(name, spec with rayStartParams and template) of the head and every worker group."""
    spec = cluster["spec"]
    return [("head", spec["headGroupSpec"]), *((g["groupName"], g) for g in spec["workerGroupSpecs"])]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_ray_podmonitor_scrapes_every_ray_node_on_its_metrics_export_port(overlay: str) -> None:
    docs = render(K8S / "overlays" / overlay)
    monitor = find(docs, "PodMonitor", "archipelago-ray")["spec"]
    endpoints = monitor["podMetricsEndpoints"]
    assert [(e["port"], e.get("path", "/metrics")) for e in endpoints] == [("metrics", "/metrics")]
    cluster = find(docs, "RayCluster")
    nodes = node_specs(cluster)
    assert len(nodes) >= 2, "a head and a worker group"
    for name, node in nodes:
        template = node["template"]
        assert labels_match(monitor["selector"]["matchLabels"], template["metadata"]["labels"]), name
        ports = {p["name"]: p["containerPort"] for c in template["spec"]["containers"] for p in c.get("ports", [])}
        export = str(node.get("rayStartParams", {}).get("metrics-export-port", KUBERAY_METRICS_PORT))
        assert str(ports.get("metrics")) == export, f"{name}: the port named metrics is Ray's export port {export}"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_gateway_pods_own_ray_node_is_scraped_on_the_port_the_entrypoint_gives_it(overlay: str) -> None:
    """deploy/docker/entrypoint.sh joins the RayCluster with a Ray node of the gateway pod's own (shards
    may be placed there), exporting Ray's metrics on ``--metrics-export-port`` (8090 unless
    ARCHIPELAGO_RAY_METRICS_PORT says): the gateway's container port named ray-metrics is that port, and
    the PodMonitor archipelago-gateway-ray scrapes it on the gateway's pods."""
    entrypoint = (K8S.parent / "docker" / "entrypoint.sh").read_text(encoding="utf-8")
    match = re.search(r'--metrics-export-port="\$\{ARCHIPELAGO_RAY_METRICS_PORT:-(\d+)\}"', entrypoint)
    assert match, "the entrypoint's ray start gives its node a metrics export port"
    docs = render(K8S / "overlays" / overlay)
    gateway = find(docs, "Deployment", "archipelago-gateway")
    template = gateway["spec"]["template"]
    ports = {p["name"]: p["containerPort"] for c in template["spec"]["containers"] for p in c.get("ports", [])}
    assert str(ports.get("ray-metrics")) == match[1]
    monitor = find(docs, "PodMonitor", "archipelago-gateway-ray")["spec"]
    assert [e["port"] for e in monitor["podMetricsEndpoints"]] == ["ray-metrics"]
    assert labels_match(monitor["selector"]["matchLabels"], template["metadata"]["labels"])
