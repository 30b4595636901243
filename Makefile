# Two commands on a fresh machine: `make serve` (serves on 127.0.0.1:$(PORT)) and `make test` (the whole CPU suite).
# GPU machine: install the CUDA build of torch first (or use the image's), then `make serve TORCH=skip`.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install -q --disable-pip-version-check
HOST ?= 127.0.0.1
PORT ?= 8000
TORCH ?= cpu          # cpu: pin the CPU build (requirements/torch-cpu.txt); skip: keep the torch already importable
JOBS ?=
SET ?= default

.PHONY: venv serve test test-deps gpu-test kernels cublas-headers ops-tools loadtest tuner-smoke clean

venv: $(VENV)/.stamp-runtime

# --system-site-packages so that TORCH=skip reuses a machine's own (CUDA) torch instead of downloading one.
$(VENV)/.stamp-runtime: requirements/runtime.txt requirements/torch-cpu.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(if $(filter skip,$(strip $(TORCH))),--system-site-packages) $(VENV)
	$(if $(filter skip,$(strip $(TORCH))),,$(PIP) -r requirements/torch-cpu.txt)
	$(PIP) -r requirements/runtime.txt
	$(PIP) --no-deps -e .
	touch $@

serve: venv
	HGEMM_HOST=$(HOST) HGEMM_PORT=$(PORT) $(PY) -m service

test-deps: $(VENV)/.stamp-test

$(VENV)/.stamp-test: $(VENV)/.stamp-runtime requirements/test.txt
	$(PIP) -r requirements/test.txt
	touch $@

# The test suite compile-checks our cuBLAS wrapper, so CI fetches cuBLAS headers (from the nvidia-cublas wheel) and
# installs promtool/amtool/docker-compose from Debian for the monitoring tests.
test: test-deps cublas-headers ops-tools
	$(PY) -m pytest -q

cublas-headers: venv
	$(PY) -m kernels.cublas.fetch_headers

ops-tools:
	scripts/install-ops-tools.sh

SCENARIO ?= resident
loadtest: test-deps
	loadtest/run_ramp.sh http://$(HOST):$(PORT) $(SCENARIO) loadtest/results/$$(date +%F)-$(SCENARIO)

tuner-smoke:
	bash tuner/gpu_smoke.sh

gpu-test: test-deps
	$(PY) -m pytest -q -m gpu

kernels: venv
	$(PY) -m kernels.build --set $(SET) $(if $(JOBS),--jobs $(JOBS))

clean:
	rm -rf $(VENV) .cache .pytest_cache build
