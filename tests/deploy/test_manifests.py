"""The Kubernetes manifests (deploy/k8s) and the image (Dockerfile), checked offline.

Each overlay is rendered with ``kubectl kustomize`` (kubectl must be on PATH: the test fails, not skips,
without it). Every document of a core kind is validated by kubernetes-validate against the Kubernetes
API schema with unknown fields refused (``strict``); the custom resources (KubeRay's RayCluster, the
Prometheus Operator's PodMonitor) against their CRDs' schemas vendored in deploy/k8s/schemas, made
strict the same way, and the RayCluster's pod templates as core PodTemplates. Then what ties the pieces
together: probes, ports, names, addresses, images, the environment the code reads, Redis' durability.
"""

from __future__ import annotations

import ast
import base64
import copy
import fnmatch
import functools
import importlib.util
import json
import os
import re
import shutil
import subprocess
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import kubernetes_validate
import pytest
import yaml

from gateway.app import LIVENESS

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
SCHEMAS = K8S / "schemas"
OVERLAYS = ("dev", "prod")
#: the Kubernetes version validated against (gRPC probes are GA since 1.27, autoscaling/v2 since 1.23)
K8S_VERSION = "1.30"
#: custom resources and their vendored schemas (deploy/README.md says where each comes from)
CRD_SCHEMAS = {
    ("ray.io/v1", "RayCluster"): "ray.io_raycluster_v1.json",
    ("monitoring.coreos.com/v1", "PodMonitor"): "monitoring.coreos.com_podmonitor_v1.json",
    ("monitoring.coreos.com/v1", "PrometheusRule"): "monitoring.coreos.com_prometheusrule_v1.json",
}
#: environment variables set on our containers that a library reads, not our code: where it reads them
LIBRARY_ENV = {
    "OTEL_EXPORTER_OTLP_ENDPOINT": ("opentelemetry", "sdk/environment_variables/__init__.py"),
    "RAY_AUTH_TOKEN": ("ray", "_raylet.so"),  # Ray's token authentication (its C++ core)
}
GATEWAY = "archipelago-gateway"
GRPC_PORT, HTTP_PORT = 50051, 8080

Doc = dict[str, Any]


# --- rendering and validation helpers --------------------------------------------------------------


def kustomize_command() -> list[str]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.fail("kubectl is not on PATH: these tests render deploy/k8s with `kubectl kustomize` (kubectl "
                    "1.27 or later; Debian's kubernetes-client 1.20 is too old for kustomize components). "
                    "Install it from the Kubernetes packages (pkgs.k8s.io) or as the static binary from "
                    "dl.k8s.io, see deploy/README.md.")
    return [kubectl, "kustomize"]


@functools.cache
def _render(path: str) -> tuple[Doc, ...]:
    proc = subprocess.run([*kustomize_command(), path], capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        pytest.fail(f"kubectl kustomize {path} failed:\n{proc.stderr}")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return tuple(d for d in yaml.load_all(proc.stdout, Loader=loader) if d)


def render(path: Path) -> list[Doc]:
    """The documents of a kustomization, rendered (a fresh copy each call: tests may change them)."""
    return copy.deepcopy(list(_render(str(path))))


def find(docs: list[Doc], kind: str, name: str | None = None) -> Doc:
    found = [d for d in docs if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)]
    assert len(found) == 1, f"expected one {kind} {name or ''}, found {len(found)}"
    return found[0]


def validate_core(doc: Doc) -> None:
    """Validate against the Kubernetes API schema, unknown fields refused; raises ValidationError."""
    kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


def strict(schema: Any) -> Any:
    """A CRD's openAPIV3Schema as a strict JSON schema: an object schema with ``properties`` refuses other
    properties unless it says ``x-kubernetes-preserve-unknown-fields`` (the API server would drop them
    silently, or refuse them under kubectl's strict field validation); ``nullable`` allows null;
    ``x-kubernetes-int-or-string`` an integer or a string."""
    if isinstance(schema, list):
        return [strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: strict(v) if k in ("items", "additionalProperties", "anyOf", "allOf", "oneOf", "not") else v
           for k, v in schema.items()}
    if "properties" in schema:
        out["properties"] = {k: strict(v) for k, v in schema["properties"].items()}
        if not schema.get("x-kubernetes-preserve-unknown-fields") and "additionalProperties" not in schema:
            out["additionalProperties"] = False
    if schema.get("x-kubernetes-int-or-string") and "type" not in schema and "anyOf" not in schema:
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if schema.get("nullable") and isinstance(schema.get("type"), str):
        out["type"] = [schema["type"], "null"]
    return out


@functools.cache
def crd_validator(api_version: str, kind: str) -> jsonschema.Draft202012Validator:
    schema = json.loads((SCHEMAS / CRD_SCHEMAS[(api_version, kind)]).read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(strict(schema))


def ray_pod_templates(ray: Doc) -> Iterator[tuple[str, Doc]]:
    yield "head", ray["spec"]["headGroupSpec"]["template"]
    for group in ray["spec"]["workerGroupSpecs"]:
        yield group["groupName"], group["template"]


def validate_custom(doc: Doc) -> None:
    """A custom resource: its schema (strict), its metadata as an ObjectMeta, and a RayCluster's pod
    templates as core PodTemplates; raises a ValidationError."""
    crd_validator(doc["apiVersion"], doc["kind"]).validate(doc)
    validate_core({"apiVersion": "v1", "kind": "ConfigMap", "metadata": doc["metadata"]})
    if doc["kind"] == "RayCluster":
        for group, template in ray_pod_templates(doc):
            validate_core({"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": f"ray-{group}"},
                           "template": template})


def validate(doc: Doc) -> None:
    if (doc["apiVersion"], doc["kind"]) in CRD_SCHEMAS:
        validate_custom(doc)
    else:
        validate_core(doc)


def pod_templates(docs: list[Doc]) -> Iterator[tuple[str, Doc]]:
    """Every pod template of the rendered cluster, named kind/name[/group]."""
    for doc in docs:
        name = f"{doc['kind']}/{doc['metadata']['name']}"
        if doc["kind"] in ("Deployment", "StatefulSet", "DaemonSet", "Job"):
            yield name, doc["spec"]["template"]
        elif doc["kind"] == "RayCluster":
            for group, template in ray_pod_templates(doc):
                yield f"{name}/{group}", template


def labels_match(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


def pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def project_image(docs: list[Doc]) -> str:
    return str(find(docs, "Deployment", GATEWAY)["spec"]["template"]["spec"]["containers"][0]["image"])


def project_containers(docs: list[Doc]) -> Iterator[tuple[str, Doc]]:
    """The containers that run the project image (the gateway's, the Ray nodes')."""
    image = project_image(docs)
    for name, template in pod_templates(docs):
        for container in template["spec"]["containers"]:
            if container["image"] == image:
                yield f"{name}/{container['name']}", container


@functools.cache
def env_names_read_by_code() -> frozenset[str]:
    """Environment variable names the project's code can read: every string constant of services/,
    gateway/ and client/ that looks like one (``os.environ.get("REDIS_URL")``), with the names built from
    a constant f-string prefix and another constant of the module (``env.get(f"ARCHIPELAGO_{name}")`` with
    ``num("LOBBY_PER_MIN", …)``), and the variables the image's entrypoint script reads."""
    names: set[str] = set()
    for package in ("services", "gateway", "client"):
        for path in (ROOT / package).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            consts = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
            prefixes = {n.values[0].value for n in ast.walk(tree)
                        if isinstance(n, ast.JoinedStr) and len(n.values) > 1
                        and isinstance(n.values[0], ast.Constant) and isinstance(n.values[0].value, str)}
            names |= consts | {p + c for p in prefixes for c in consts}
    script = (DEPLOY / "docker" / "entrypoint.sh").read_text(encoding="utf-8")
    names |= set(re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)", script))
    return frozenset(n for n in names if re.fullmatch(r"[A-Z][A-Za-z0-9_]*", n))


def read_by_library(name: str) -> bool:
    package, relative = LIBRARY_ENV[name]
    spec = importlib.util.find_spec(package)  # a top-level package: found without importing it
    assert spec is not None and spec.submodule_search_locations, f"{package} is not installed"
    path = Path(next(iter(spec.submodule_search_locations))) / relative
    return name.encode() in path.read_bytes()


def container_env(container: Doc, docs: list[Doc]) -> dict[str, Doc]:
    """A container's environment: name -> its source (``{"value": …}``, ``{"valueFrom": …}``, or
    ``{"configMap": name}`` / ``{"secret": name}`` for envFrom)."""
    env: dict[str, Doc] = {}
    for source in container.get("envFrom", []):
        if "configMapRef" in source:
            cm = find(docs, "ConfigMap", source["configMapRef"]["name"])
            env.update({k: {"configMap": cm["metadata"]["name"]} for k in cm["data"]})
        if "secretRef" in source:
            secret = find(docs, "Secret", source["secretRef"]["name"])
            env.update({k: {"secret": secret["metadata"]["name"]} for k in secret_data(secret)})
    for var in container.get("env", []):
        env[var["name"]] = var
    return env


def secret_data(secret: Doc) -> dict[str, str]:
    data = {k: base64.b64decode(v).decode() for k, v in secret.get("data", {}).items()}
    return {**data, **secret.get("stringData", {})}


def env_value(docs: list[Doc], container: Doc, name: str) -> str:
    """The value a container gets for ``name`` (literal, from a ConfigMap, or from a Secret)."""
    source = container_env(container, docs)[name]
    if "value" in source:
        return str(source["value"])
    if "configMap" in source:
        return str(find(docs, "ConfigMap", source["configMap"])["data"][name])
    ref = source["valueFrom"]
    if "secretKeyRef" in ref:
        return secret_data(find(docs, "Secret", ref["secretKeyRef"]["name"]))[ref["secretKeyRef"]["key"]]
    if "configMapKeyRef" in ref:
        return str(find(docs, "ConfigMap", ref["configMapKeyRef"]["name"])["data"][ref["configMapKeyRef"]["key"]])
    raise AssertionError(f"{name}: no literal value ({ref})")


# --- fixtures ---------------------------------------------------------------------------------------


@pytest.fixture(params=OVERLAYS)
def overlay(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def docs(overlay: str) -> list[Doc]:
    return render(K8S / "overlays" / overlay)


# --- schemas -----------------------------------------------------------------------------------------


def test_every_document_validates_strictly(docs: list[Doc]) -> None:
    kinds = set()
    for doc in docs:
        try:
            validate(doc)
        except kubernetes_validate.SchemaNotFoundError:
            pytest.fail(f"{doc['apiVersion']} {doc['kind']} has no schema: vendor its CRD's (deploy/k8s/schemas)")
        except jsonschema.ValidationError as exc:
            pytest.fail(f"{doc['kind']}/{doc['metadata']['name']}: {'.'.join(map(str, exc.absolute_path))}: "
                        f"{exc.message}")
        kinds.add(doc["kind"])
    assert {"RayCluster", "PodMonitor", "Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget",
            "StatefulSet", "ConfigMap", "Secret", "NetworkPolicy", "Namespace"} <= kinds


def _gateway(docs: list[Doc]) -> Doc:
    return find(docs, "Deployment", GATEWAY)


def test_a_typo_in_a_deployment_fails() -> None:
    docs = render(K8S / "overlays" / "dev")
    validate_core(_gateway(docs))
    mutations: tuple[Callable[[Any], object], ...] = (
        lambda d: d["spec"]["template"]["spec"]["containers"][0].__setitem__("imagePulPolicy", "Always"),
        lambda d: d["spec"].__setitem__("replica", 2),
        lambda d: d["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["grpc"].__setitem__("prot", 1),
    )
    for mutate in mutations:
        doc = copy.deepcopy(_gateway(docs))
        mutate(doc)
        with pytest.raises(jsonschema.ValidationError, match="unexpected"):
            validate_core(doc)


def test_a_typo_in_the_raycluster_fails() -> None:
    ray = find(render(K8S / "overlays" / "dev"), "RayCluster")
    validate_custom(ray)
    mutations: tuple[Callable[[Any], object], ...] = (
        lambda r: r["spec"].__setitem__("enableInTreeAutoscalin", True),
        lambda r: r["spec"]["workerGroupSpecs"][0].__setitem__("minReplica", 1),
        lambda r: r["spec"]["headGroupSpec"].__setitem__("rayStartParam", {}),
        lambda r: r["spec"]["autoscalerOptions"].__setitem__("idleTimeout", 60),
        lambda r: r["metadata"].__setitem__("label", {}),
    )
    for mutate in mutations:
        doc = copy.deepcopy(ray)
        mutate(doc)
        with pytest.raises(jsonschema.ValidationError, match="unexpected"):
            validate_custom(doc)
    doc = copy.deepcopy(ray)
    doc["spec"]["workerGroupSpecs"][0]["maxReplicas"] = "16"  # a wrong type too
    with pytest.raises(jsonschema.ValidationError):
        validate_custom(doc)


def test_a_typo_in_a_ray_pod_template_fails() -> None:
    ray = find(render(K8S / "overlays" / "dev"), "RayCluster")
    mutations: tuple[Callable[[Any], object], ...] = (
        lambda r: r["spec"]["headGroupSpec"]["template"]["spec"].__setitem__("nodeSelectr", {}),
        lambda r: r["spec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0].__setitem__("envFrm", []),
        lambda r: r["spec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]["resources"].__setitem__(
            "limit", {}),
    )
    for mutate in mutations:
        doc = copy.deepcopy(ray)
        mutate(doc)
        with pytest.raises(jsonschema.ValidationError, match="unexpected"):
            validate_custom(doc)


def test_a_typo_in_a_podmonitor_fails() -> None:
    monitor = find(render(K8S / "overlays" / "dev"), "PodMonitor", GATEWAY)
    validate_custom(monitor)
    mutations: tuple[Callable[[Any], object], ...] = (
        lambda m: m["spec"].__setitem__("podMetricEndpoints", []),
        lambda m: m["spec"]["podMetricsEndpoints"][0].__setitem__("paths", "/metrics"),
    )
    for mutate in mutations:
        doc = copy.deepcopy(monitor)
        mutate(doc)
        with pytest.raises(jsonschema.ValidationError, match="unexpected"):
            validate_custom(doc)


def test_vendored_schemas_say_where_they_come_from() -> None:
    readme = (DEPLOY / "README.md").read_text(encoding="utf-8")
    for file in CRD_SCHEMAS.values():
        comment = json.loads((SCHEMAS / file).read_text(encoding="utf-8"))["$comment"]
        source = re.search(r"from (\S+/\S+)@([0-9a-f]{40}) \([^)]*\):(\S+),", comment)
        assert source, comment
        repo, commit, path = source.groups()
        assert file in readme and repo in readme and commit in readme and path in readme, file


# --- the gateway --------------------------------------------------------------------------------------


def test_gateway_probes_use_grpc_health_on_50051(docs: list[Doc]) -> None:
    container = _gateway(docs)["spec"]["template"]["spec"]["containers"][0]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"grpc": GRPC_PORT, "http": HTTP_PORT, "ray-metrics": 8090}  # (8090: its own Ray node's metrics)
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        want = {"port": GRPC_PORT, "service": LIVENESS} if probe == "livenessProbe" else {"port": GRPC_PORT}
        assert container[probe]["grpc"] == want, probe  # readiness: the overall service ""
        assert not {"httpGet", "tcpSocket", "exec"} & set(container[probe]), probe
    assert env_value(docs, container, "ARCHIPELAGO_GRPC_PORT") == str(GRPC_PORT)
    assert env_value(docs, container, "ARCHIPELAGO_HTTP_PORT") == str(HTTP_PORT)
    assert env_value(docs, container, "ARCHIPELAGO_HOST") == "0.0.0.0"


def test_services_reach_their_pods(docs: list[Doc]) -> None:
    templates = dict(pod_templates(docs))
    for service in (d for d in docs if d["kind"] == "Service"):
        selected = [t for t in templates.values() if labels_match(service["spec"]["selector"], t["metadata"]["labels"])]
        assert selected, f"Service {service['metadata']['name']} selects no pod"
        for port in service["spec"]["ports"]:
            target = port.get("targetPort", port["port"])
            assert any(target in (p.get("name"), p["containerPort"])
                       for t in selected for c in t["spec"]["containers"] for p in c.get("ports", [])), port
    gateway_ports = {p["name"]: p["port"] for p in find(docs, "Service", GATEWAY)["spec"]["ports"]}
    assert gateway_ports == {"grpc": GRPC_PORT, "http": HTTP_PORT}


def test_gateway_scales_within_its_budget(docs: list[Doc], overlay: str) -> None:
    deployment = _gateway(docs)
    hpa = find(docs, "HorizontalPodAutoscaler", GATEWAY)
    pdb = find(docs, "PodDisruptionBudget", GATEWAY)
    assert "replicas" not in deployment["spec"], "the HorizontalPodAutoscaler owns the replica count"
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": GATEWAY}
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert labels_match(pdb["spec"]["selector"]["matchLabels"], labels)
    assert labels_match(deployment["spec"]["selector"]["matchLabels"], labels)
    bounds = (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"])
    if overlay == "dev":
        assert bounds == (1, 1)
        assert pdb["spec"]["maxUnavailable"] == 1 and "minAvailable" not in pdb["spec"]
    else:
        assert bounds == (3, 20) and pdb["spec"]["minAvailable"] == 2
        assert pdb["spec"]["minAvailable"] < bounds[0], "a budget the minimum cannot meet blocks every drain"


# --- the Ray cluster ----------------------------------------------------------------------------------


def test_raycluster_is_what_kuberay_accepts(docs: list[Doc], overlay: str) -> None:
    """The checks of KubeRay's own validation (ray-operator/controllers/ray/utils/validation.go) that
    apply to our spec, and what we rely on."""
    ray = find(docs, "RayCluster")
    spec = ray["spec"]
    name = ray["metadata"]["name"]
    assert len(name) <= 53 and re.fullmatch(r"[a-z]([-a-z0-9]*[a-z0-9])?", name)
    ray_pin = next(d for d in pyproject()["project"]["dependencies"] if re.match(r"ray(\[[^]]*\])?==", d))
    assert spec["rayVersion"] == ray_pin.split("==")[1], "rayVersion must be the Ray the image installs"
    assert spec["enableInTreeAutoscaling"] is True
    assert spec["authOptions"] == {"mode": "token"}  # needs Ray >= 2.52 (KubeRay refuses otherwise)
    groups = [("head", spec["headGroupSpec"]), *((g["groupName"], g) for g in spec["workerGroupSpecs"])]
    for group, group_spec in groups:
        params = group_spec.get("rayStartParams", {})
        assert group_spec["template"]["spec"]["containers"], group
        assert not ({"num-cpus", "num-gpus", "memory", "resources"} & set(params) and group_spec.get("resources"))
        assert "labels" not in params, group
        assert all(isinstance(v, str) for v in params.values()), group
        for container in group_spec["template"]["spec"]["containers"]:
            requests, limits = container["resources"]["requests"], container["resources"]["limits"]
            assert requests["cpu"] and requests["memory"] and limits["memory"], group
    assert spec["headGroupSpec"]["rayStartParams"]["num-cpus"] == "0"
    (workers,) = spec["workerGroupSpecs"]
    assert workers["minReplicas"] <= workers["replicas"] <= workers["maxReplicas"]
    expected = {"dev": (1, 1), "prod": (2, 16)}[overlay]
    assert (workers["minReplicas"], workers["maxReplicas"]) == expected


def test_the_ray_autoscaler_reads_the_raycluster(docs: list[Doc], overlay: str) -> None:
    """What Ray's KubeRay autoscaler (the head's sidecar, same Ray) makes of the RayCluster."""
    from ray.autoscaler._private.kuberay.autoscaling_config import _derive_autoscaling_config_from_ray_cr

    config = _derive_autoscaling_config_from_ray_cr(find(docs, "RayCluster"))
    types = config["available_node_types"]
    assert set(types) == {"headgroup", "shards"}
    assert types["headgroup"]["resources"]["CPU"] == 0
    cpus, workers = {"dev": (1, (1, 1)), "prod": (4, (2, 16))}[overlay]
    assert (types["shards"]["min_workers"], types["shards"]["max_workers"]) == workers
    # the shard slots (a custom resource; deploy/README.md "Placement") parse as Ray reads them
    assert types["shards"]["resources"] == {**types["shards"]["resources"], "CPU": cpus, "archipelago_shard": 64}


def test_one_image_for_gateway_and_ray_nodes(docs: list[Doc], overlay: str) -> None:
    ray = find(docs, "RayCluster")
    images = {project_image(docs)} | {c["image"] for _, t in ray_pod_templates(ray) for c in t["spec"]["containers"]}
    assert len(images) == 1, images
    # the autoscaler sidecar runs the head's image unless told otherwise: keep it so
    assert "image" not in ray["spec"].get("autoscalerOptions", {})
    assert images == {{"dev": "archipelago:dev", "prod": "registry.example.com/archipelago:0.1.0"}[overlay]}


def test_gateway_joins_the_ray_head(docs: list[Doc]) -> None:
    container = _gateway(docs)["spec"]["template"]["spec"]["containers"][0]
    ray = find(docs, "RayCluster")
    address = env_value(docs, container, "RAY_ADDRESS")
    assert not address.startswith("ray://"), "the gateway is a driver inside the cluster, not a Ray Client"
    host, port = address.rsplit(":", 1)
    assert host == f"{ray['metadata']['name']}-head-svc"  # the head Service KubeRay makes
    head_ports = {p["name"]: p["containerPort"]
                  for p in ray["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["ports"]}
    assert head_ports["gcs-server"] == int(port)
    assert env_value(docs, container, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER") == "1"
    assert env_value(docs, container, "RAY_AUTH_MODE") == "token"
    token = container_env(container, docs)["RAY_AUTH_TOKEN"]["valueFrom"]["secretKeyRef"]
    assert token == {"name": ray["metadata"]["name"], "key": "auth_token"}  # the Secret KubeRay generates
    script = (DEPLOY / "docker" / "entrypoint.sh").read_text(encoding="utf-8")
    assert re.search(r'ray start --address="\$RAY_ADDRESS" --num-cpus=0', script)


# --- configuration and secrets ------------------------------------------------------------------------


def test_every_reference_resolves(docs: list[Doc]) -> None:
    """Each ConfigMap and Secret a pod refers to is rendered, with the key (or is the RayCluster's
    token Secret, made by KubeRay)."""
    rays = {d["metadata"]["name"] for d in docs if d["kind"] == "RayCluster"}

    def check(kind: str, name: str, key: str | None) -> None:
        if kind == "Secret" and name in rays and key == "auth_token":
            return
        obj = find(docs, kind, name)
        if key is not None:
            keys = set(secret_data(obj)) if kind == "Secret" else set(obj.get("data", {}))
            assert key in keys, f"{kind}/{name} has no {key}"

    for _where, template in pod_templates(docs):
        for container in template["spec"]["containers"]:
            for source in container.get("envFrom", []):
                for ref, kind in (("configMapRef", "ConfigMap"), ("secretRef", "Secret")):
                    if ref in source:
                        check(kind, source[ref]["name"], None)
            for var in container.get("env", []):
                for ref, kind in (("configMapKeyRef", "ConfigMap"), ("secretKeyRef", "Secret")):
                    if ref in var.get("valueFrom", {}):
                        check(kind, var["valueFrom"][ref]["name"], var["valueFrom"][ref]["key"])
        for volume in template["spec"].get("volumes", []):
            if "configMap" in volume:
                check("ConfigMap", volume["configMap"]["name"], None)
            if "secret" in volume:
                check("Secret", volume["secret"]["secretName"], None)


def test_every_environment_variable_is_read_by_the_code(docs: list[Doc]) -> None:
    read = env_names_read_by_code()
    for where, container in project_containers(docs):
        for name in container_env(container, docs):
            if name in LIBRARY_ENV:
                assert read_by_library(name), f"{where}: {name} is not read by {LIBRARY_ENV[name][0]}"
            else:
                assert name in read, f"{where}: {name} is read by no code in services/, gateway/, client/"


def test_the_code_reader_finds_what_the_code_reads() -> None:
    read = env_names_read_by_code()
    assert {"REDIS_URL", "RAY_ADDRESS", "ARCHIPELAGO_SHARDS", "ARCHIPELAGO_LOBBY_PER_MIN",
            "ARCHIPELAGO_LOBBY_BURST", "OTEL_TRACES_EXPORTER"} <= read
    assert "ARCHIPELAGO_NO_SUCH_SETTING" not in read


def test_the_config_per_overlay(docs: list[Doc], overlay: str) -> None:
    data = find(docs, "ConfigMap", "archipelago-config")["data"]
    assert data["ARCHIPELAGO_SHARDS"] == {"dev": "2", "prod": "16"}[overlay]
    assert "ARCHIPELAGO_RATE_LIMITS" not in data, "the limits stay on in a deployment"


def test_traces_go_to_the_collector(docs: list[Doc]) -> None:
    container = _gateway(docs)["spec"]["template"]["spec"]["containers"][0]
    assert env_value(docs, container, "OTEL_TRACES_EXPORTER") == "otlp"
    endpoint = urlsplit(env_value(docs, container, "OTEL_EXPORTER_OTLP_ENDPOINT"))
    service = find(docs, "Service", endpoint.hostname)
    assert endpoint.port in {p["port"] for p in service["spec"]["ports"]}
    config = yaml.safe_load(find(docs, "ConfigMap", "archipelago-otel-collector")["data"]["config.yaml"])
    assert config["receivers"]["otlp"]["protocols"]["grpc"]["endpoint"].endswith(f":{endpoint.port}")
    pipelines = config["service"]["pipelines"]
    assert pipelines["traces"]["receivers"] == ["otlp"]
    for pipeline in pipelines.values():
        assert set(pipeline["exporters"]) <= set(config["exporters"])
        assert set(pipeline.get("processors", [])) <= set(config["processors"])


# --- Redis --------------------------------------------------------------------------------------------


def redis_conf(docs: list[Doc]) -> dict[str, str]:
    text = find(docs, "ConfigMap", "archipelago-redis")["data"]["redis.conf"]
    lines = (line.split("#", 1)[0].strip() for line in text.splitlines())
    return dict(line.split(None, 1) for line in lines if line)


def test_redis_is_durable(docs: list[Doc]) -> None:
    conf = redis_conf(docs)
    assert conf["appendonly"] == "yes" and conf["appendfsync"] == "always"  # README "Reliability"
    assert conf["maxmemory-policy"] == "noeviction", "the journal must never be evicted"
    redis = find(docs, "StatefulSet", "archipelago-redis")
    container = redis["spec"]["template"]["spec"]["containers"][0]
    command = " ".join(container["command"])
    assert "redis-server /etc/redis/redis.conf" in command and "appendfsync" not in command
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    assert mounts["data"] == conf["dir"] and mounts["config"] == "/etc/redis"
    (claim,) = redis["spec"]["volumeClaimTemplates"]
    assert claim["metadata"]["name"] == "data"
    assert find(docs, "Service", redis["spec"]["serviceName"])["spec"]["clusterIP"] == "None"


def test_redis_url_points_at_the_redis_of_the_cluster(docs: list[Doc], overlay: str) -> None:
    container = _gateway(docs)["spec"]["template"]["spec"]["containers"][0]
    url = urlsplit(env_value(docs, container, "REDIS_URL"))
    redis = find(docs, "StatefulSet", "archipelago-redis")
    assert url.hostname == f"{redis['metadata']['name']}-0.{redis['spec']['serviceName']}"
    assert url.port == int(redis_conf(docs)["port"])
    assert url.password == secret_data(find(docs, "Secret", "archipelago-secrets"))["REDIS_PASSWORD"]
    policy = find(docs, "NetworkPolicy", "archipelago-redis")
    assert labels_match(policy["spec"]["podSelector"]["matchLabels"], redis["spec"]["template"]["metadata"]["labels"])
    allowed = [f["podSelector"]["matchLabels"] for rule in policy["spec"]["ingress"] for f in rule["from"]]
    for where, template in pod_templates(docs):
        if any(c["image"] == project_image(docs) for c in template["spec"]["containers"]):
            labels = template["metadata"]["labels"]
            assert any(labels_match(sel, labels) for sel in allowed), f"{where} cannot reach Redis"


def test_a_managed_redis_leaves_the_component_out(tmp_path: Path) -> None:
    """The recipe of deploy/README.md: an overlay without the Redis component, REDIS_URL in the Secret."""
    base = os.path.relpath(K8S / "base", tmp_path)  # kustomize refuses absolute paths
    (tmp_path / "kustomization.yaml").write_text(yaml.safe_dump({
        "apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": [base],
        "patches": [{"target": {"kind": "Secret", "name": "archipelago-secrets"},
                     "patch": yaml.safe_dump([{"op": "replace", "path": "/stringData/REDIS_URL",
                                               "value": "rediss://default:pw@redis.example.com:6380/0"}])}],
    }))
    docs = render(tmp_path)
    assert not [d for d in docs if d["metadata"]["name"] == "archipelago-redis"]
    container = _gateway(docs)["spec"]["template"]["spec"]["containers"][0]
    assert env_value(docs, container, "REDIS_URL") == "rediss://default:pw@redis.example.com:6380/0"
    for doc in docs:
        validate(doc)


def test_real_secrets_replace_the_placeholders(tmp_path: Path) -> None:
    """The recipe of deploy/README.md: a secretGenerator replaces the placeholder Secret from a file."""
    (tmp_path / "secrets.env").write_text("REDIS_URL=redis://:pw@archipelago-redis-0.archipelago-redis:6379/0\n"
                                          "REDIS_PASSWORD=pw\nARCHIPELAGO_ADMIN_TOKEN=tok\n")
    (tmp_path / "kustomization.yaml").write_text(yaml.safe_dump({
        "apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
        "resources": [os.path.relpath(K8S / "overlays" / "prod", tmp_path)],
        "secretGenerator": [{"name": "archipelago-secrets", "behavior": "replace", "envs": ["secrets.env"],
                             "options": {"disableNameSuffixHash": True}}],
    }))
    docs = render(tmp_path)
    assert secret_data(find(docs, "Secret", "archipelago-secrets")) == {
        "REDIS_URL": "redis://:pw@archipelago-redis-0.archipelago-redis:6379/0", "REDIS_PASSWORD": "pw",
        "ARCHIPELAGO_ADMIN_TOKEN": "tok"}
    base = render(K8S / "overlays" / "prod")
    assert "change-me" in json.dumps(secret_data(find(base, "Secret", "archipelago-secrets")))
    test_redis_url_points_at_the_redis_of_the_cluster(docs, "prod")


# --- monitoring ---------------------------------------------------------------------------------------


def test_podmonitors_scrape_real_ports(docs: list[Doc]) -> None:
    templates = dict(pod_templates(docs))
    for monitor in (d for d in docs if d["kind"] == "PodMonitor"):
        selected = [t for t in templates.values()
                    if labels_match(monitor["spec"]["selector"]["matchLabels"], t["metadata"]["labels"])]
        assert selected, monitor["metadata"]["name"]
        for endpoint in monitor["spec"]["podMetricsEndpoints"]:
            for template in selected:
                names = {p.get("name") for c in template["spec"]["containers"] for p in c.get("ports", [])}
                assert endpoint["port"] in names, (monitor["metadata"]["name"], endpoint["port"])
    gateway = find(docs, "PodMonitor", GATEWAY)["spec"]["podMetricsEndpoints"]
    assert gateway == [{**gateway[0], "port": "http", "path": "/metrics"}]


def test_the_dashboard_configmap_is_the_dashboard(docs: list[Doc]) -> None:
    dashboards = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"].get("labels", {}).get(
        "grafana_dashboard") == "1"]
    assert len(dashboards) == 1
    assert dashboards[0]["data"] == {"archipelago.json": (DEPLOY / "grafana" / "archipelago.json").read_text(
        encoding="utf-8")}


# --- the image ----------------------------------------------------------------------------------------


def dockerfile() -> str:
    return (ROOT / "Dockerfile").read_text(encoding="utf-8").replace("\\\n", " ")


def test_image_is_python_311_and_runs_serve_as_non_root() -> None:
    text = dockerfile()
    python = re.search(r"^ARG PYTHON_IMAGE=python:(\d+\.\d+)-slim", text, re.M)
    assert python and python.group(1) == "3.11", "Ray needs the same Python on the gateway and every node"
    assert pyproject()["project"]["requires-python"] == ">=3.11"
    user = re.findall(r"^USER (\S+)", text, re.M)
    assert user and not user[-1].startswith(("0", "root"))
    entrypoint = json.loads(re.findall(r"^ENTRYPOINT (.+)$", text, re.M)[-1])
    assert entrypoint[-1] == "archipelago-entrypoint" and json.loads(re.findall(r"^CMD (.+)$", text, re.M)[-1]) == [
        "serve"]
    script = (DEPLOY / "docker" / "entrypoint.sh").read_text(encoding="utf-8")
    assert script.rstrip().endswith('exec archipelago serve "$@"')
    assert "ARCHIPELAGO_HOST=0.0.0.0" in text


def test_image_generates_the_grpc_code_as_the_makefile_does() -> None:
    make = re.search(r"grpc_tools\.protoc (.+) \$\(PROTOS\)", (ROOT / "Makefile").read_text(encoding="utf-8"))
    assert make
    assert f"python -m grpc_tools.protoc {make.group(1)} proto/archipelago/v1/*.proto" in dockerfile()
    assert "touch archipelago/__init__.py archipelago/v1/__init__.py" in dockerfile()


def test_image_contains_every_data_file() -> None:
    """Files the code reads beside it reach the image: in pyproject's package-data, or copied by hand."""
    text = dockerfile()
    package_data: dict[str, list[str]] = pyproject()["tool"]["setuptools"]["package-data"]
    copied = re.findall(r"cp -r (\S+) ", text)
    missing = []
    for package in ("engine", "services", "gateway", "client"):
        for path in (ROOT / package).rglob("*"):
            if not path.is_file() or path.suffix in (".py", ".pyc") or "__pycache__" in path.parts:
                continue
            relative = path.relative_to(ROOT)
            inside = path.relative_to(ROOT / package).as_posix()
            if any(fnmatch.fnmatch(inside, glob) for glob in package_data.get(package, [])):
                continue
            if any(relative.is_relative_to(c) for c in copied):
                continue
            missing.append(str(relative))
    assert not missing, f"not in the wheel nor copied by the Dockerfile: {missing}"


def test_dockerignore_lets_in_what_the_dockerfile_copies() -> None:
    lines = [x.strip() for x in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()]
    allowed = {x[1:].rstrip("/") for x in lines if x.startswith("!")}
    assert "*" in lines
    copies = [line.split()[1:] for line in dockerfile().splitlines() if line.startswith("COPY ")]
    sources = [s for words in copies if not any(w.startswith("--from") for w in words)
               for s in [w for w in words if not w.startswith("--")][:-1]]
    assert "README.md" in sources and "deploy/docker/entrypoint.sh" in sources
    for source in sources:
        assert source.rstrip("/") in allowed, source
