# syntax=docker/dockerfile:1
# The archipelago image: the gateway (`archipelago serve`, the default command) and, with the same
# code, the Ray head and worker nodes the GameShard actors run on (KubeRay starts `ray start` in it:
# a shard is pickled by reference, so every Ray node needs the project installed at the same Ray and
# Python versions as the gateway). How it is deployed: deploy/README.md.
#
#   docker build -t archipelago:dev .
#   docker run --rm -p 50051:50051 -p 8080:8080 archipelago:dev    # embedded mode, in-process Redis
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1
WORKDIR /src
# Dependencies first (a layer that changes only with pyproject.toml), with the OTLP trace exporter
# (OTEL_TRACES_EXPORTER=otlp needs it; see services/tracing.py).
COPY pyproject.toml README.md ./
RUN python -c "import tomllib; deps = tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']; \
open('/tmp/requirements.txt', 'w').write('\n'.join(deps) + '\n')" \
 && pip install -r /tmp/requirements.txt "opentelemetry-exporter-otlp-proto-grpc>=1.25,<2"
# The gRPC code, generated as the Makefile's `proto` target does (grpcio-tools at the pinned version).
COPY proto/ proto/
RUN python -m grpc_tools.protoc -Iproto --python_out=. --pyi_out=. --grpc_python_out=. proto/archipelago/v1/*.proto \
 && touch archipelago/__init__.py archipelago/v1/__init__.py
COPY engine/ engine/
COPY services/ services/
COPY gateway/ gateway/
COPY client/ client/
# The installed package (its data files, the MCP door's rule texts among them) is imported from /
# (not from /src, which would shadow it).
RUN pip install --no-deps . \
 && cd / && python -c "import archipelago.v1.game_pb2_grpc, client.cli, gateway.app, services.shard; \
from gateway.mcp_door import RULES; assert sorted(RULES.glob('*.md')), RULES"

FROM ${PYTHON_IMAGE}
# tini as PID 1: forwards signals to `archipelago serve` and reaps the Ray node's processes.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 1000 archipelago \
 && useradd --uid 1000 --gid 1000 --create-home --shell /bin/bash archipelago
# Python, the dependencies and the project, all under /usr/local (on every PATH, login shells too).
COPY --from=build /usr/local /usr/local
COPY --chmod=0755 deploy/docker/entrypoint.sh /usr/local/bin/archipelago-entrypoint
# Listen on every interface inside the container; a Ray node here must not keep to 127.0.0.1.
ENV PYTHONUNBUFFERED=1 \
    ARCHIPELAGO_HOST=0.0.0.0 \
    ARCHIPELAGO_DATA_DIR=/home/archipelago/var \
    RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=1 \
    RAY_USAGE_STATS_ENABLED=0
USER 1000:1000
WORKDIR /home/archipelago
EXPOSE 50051 8080
ENTRYPOINT ["/usr/bin/tini", "--", "archipelago-entrypoint"]
CMD ["serve"]
