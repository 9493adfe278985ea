# The README's two commands: `make run` (install + run the cluster) and `make test` (install + every test).
VENV    ?= .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.installed-stamp
PROTOS  := $(wildcard proto/archipelago/v1/*.proto)
GEN     := archipelago/v1/game_pb2.py

.PHONY: install proto run test lint typecheck unit bench clean test-deps

$(STAMP): pyproject.toml
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]' --config-settings editable_mode=compat
	@touch $(STAMP)

install: $(STAMP) proto

# Generated protobuf/gRPC code lands in ./archipelago/v1 (git-ignored, regenerated on change).
$(GEN): $(PROTOS) $(STAMP)
	$(PY) -m grpc_tools.protoc -Iproto --python_out=. --pyi_out=. --grpc_python_out=. $(PROTOS)
	@touch archipelago/__init__.py archipelago/v1/__init__.py

proto: $(GEN)

run: install
	$(VENV)/bin/archipelago serve

test-deps:
	@scripts/ensure-test-deps.sh

lint: install
	$(VENV)/bin/ruff check .

typecheck: install
	$(VENV)/bin/mypy

unit: install
	$(VENV)/bin/pytest -q -m "not e2e"

test: install test-deps lint typecheck
	@scripts/run-tests.sh

bench: install
	@mkdir -p var
	$(PY) -m bench.capacity --json var/capacity.json
	$(PY) -m bench.hop_bench --json var/hop.json
	$(PY) -m bench.path_bench
	$(PY) -m bench.engine_bench
	$(PY) -m bench.autopilot_bench
	$(PY) -m bench.game_memory

clean:
	rm -rf archipelago var .mypy_cache .ruff_cache .pytest_cache
