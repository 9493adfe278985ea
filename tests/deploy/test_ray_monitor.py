"""Ray's own metrics are scraped on Kubernetes (deploy/k8s/base/monitoring.yaml): the PodMonitor
archipelago-ray selects every pod of the RayCluster — the head and each worker group — on the container
port that is Ray's metrics export port there (KubeRay's ``metrics-export-port``, 8080 unless set)."""

from __future__ import annotations

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
