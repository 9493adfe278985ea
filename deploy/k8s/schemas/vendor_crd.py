"""Vendors the openAPIV3Schema of one version of a CustomResourceDefinition as JSON, for offline tests.

    CRD=ray-operator/config/crd/bases/ray.io_rayclusters.yaml
    COMMIT=59d663aeec13760646da3db9c1cf8cfe883e30b7   # v1.7.0
    git --git-dir KUBERAY.git show $COMMIT:$CRD \\
      | python deploy/k8s/schemas/vendor_crd.py --version v1 \\
          --source "ray-project/kuberay@$COMMIT (v1.7.0):$CRD" \\
          --prune spec.headGroupSpec.template --prune spec.workerGroupSpecs.items.template \\
      > deploy/k8s/schemas/ray.io_raycluster_v1.json

The schema is kept as upstream wrote it, less its ``description`` texts, and less the subtrees named by
``--prune`` (a dotted path through ``properties`` and ``items``), each replaced by an object schema marked
``x-archipelago-pruned`` that says what checks it instead. Upstream CRD schemas do not forbid unknown
fields (the API server prunes or, with kubectl's strict field validation, refuses them); the tests make
them strict when they load them (tests/deploy/test_manifests.py, ``strict``).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import yaml


def strip_descriptions(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: strip_descriptions(v) for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [strip_descriptions(v) for v in node]
    return node


def prune(schema: dict[str, Any], path: str, why: str) -> None:
    """Replace the subschema at ``path`` (e.g. ``spec.workerGroupSpecs.items.template``)."""
    node = schema
    parts = path.split(".")
    for part in parts[:-1]:
        node = node["items"] if part == "items" else node["properties"][part]
    last = parts[-1]
    if last not in node["properties"]:
        raise SystemExit(f"no property {path!r} in the schema")
    node["properties"][last] = {"type": "object", "x-archipelago-pruned": why}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", required=True, help="the CRD version to vendor (v1)")
    parser.add_argument("--source", required=True, help="repo@commit:path, recorded in the output")
    parser.add_argument("--prune", action="append", default=[], help="dotted path of a subtree to drop")
    parser.add_argument("--why", default="validated as a core PodTemplate by tests/deploy/test_manifests.py",
                        help="what checks a pruned subtree instead")
    args = parser.parse_args(argv)
    crd = yaml.safe_load(sys.stdin)
    version = next(v for v in crd["spec"]["versions"] if v["name"] == args.version)
    schema = strip_descriptions(version["schema"]["openAPIV3Schema"])
    for path in args.prune:
        prune(schema, path, args.why)
    out = {
        "$comment": f"openAPIV3Schema of {crd['spec']['names']['kind']} {crd['spec']['group']}/{args.version} "
                    f"from {args.source}, descriptions removed"
                    + (f", pruned: {', '.join(args.prune)}" if args.prune else "")
                    + " (deploy/k8s/schemas/vendor_crd.py)",
        **schema,
    }
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
