# syntax=docker/dockerfile:1
# The HGEMM service with its kernels built in. Build (from the repo root):
#   docker build -t tuned-hgemm .                                   # Hopper + Ampere kernels
#   docker build --build-arg CUDA_ARCHS=sm90 -t tuned-hgemm .       # H100/H200 only: faster build
# Run: docker compose up (docker-compose.yml) or `docker run --gpus all -p 8000:8000 tuned-hgemm`.
# Base image and torch wheel index are build args so that the CUDA version can follow the host driver.
ARG CUDA_IMAGE=nvidia/cuda:12.8.1-devel-ubuntu24.04
FROM ${CUDA_IMAGE}

ARG CUDA_ARCHS="sm90,sm80"
# The variant sets to compile: by default every variant the committed tuned tables name (tables: those, the l2_prefetch
# twins among them; default: both B layouts; wide_pdl_mid and tables_row: what the sm90 tables' B col-major and
# row-major entries were tuned over; splitk and splitk_cluster: the one-kernel split-K variants, reduced in L2 / in a
# cluster), so no tuned choice falls back for want of a build.
ARG KERNEL_SETS="tables,default,wide_pdl_mid,tables_row,splitk,splitk_cluster"
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cu128

ENV DEBIAN_FRONTEND=noninteractive \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONUNBUFFERED=1 \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH \
    PYTHONPATH=/app \
    HGEMM_CACHE_DIR=/app/.cache/hgemm

RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv python3-dev curl ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && python3 -m venv /opt/venv \
 && useradd --create-home --uid 10001 --shell /usr/sbin/nologin hgemm

WORKDIR /app

# Dependencies first (own layer: rebuilt only when a pin changes). torch: the CUDA build of the version pinned in
# requirements/torch-cpu.txt (that file's CPU build is for CPU machines); the rest, CUTLASS wheel included, from
# requirements/runtime.txt.
COPY requirements/ requirements/
RUN pip install --index-url "${TORCH_INDEX_URL}" "$(grep -E '^torch==' requirements/torch-cpu.txt)" \
 && pip install -r requirements/runtime.txt

COPY pyproject.toml README.md ./
COPY third_party/ third_party/
COPY kernels/ kernels/
COPY service/ service/
# the tuner too, so that the deployment's own shapes can be tuned on its GPU (docs/dispatch.md, "Tuning the shapes you
# serve"): docker compose run --rm api python -m tuner.tune --grid … --tables-dir /srv/tables
COPY tuner/ tuner/

# Kernels are compiled here (nvcc needs no GPU) for every arch in CUDA_ARCHS into HGEMM_CACHE_DIR, where the
# runtime loads them, and so is the C fast path of the dispatch (cc + python3-dev) with its tensor reader (c++ and
# torch's headers): the container starts ready, with no compiler work at startup.
RUN python -m kernels.build --set "${KERNEL_SETS}" --arch "${CUDA_ARCHS}" \
 && python -c "import kernels.fastpath as f; print('fast path:', f.build(), f.build_reader())" \
 && mkdir -p /srv/tables && chown -R hgemm:hgemm /app /srv/tables

USER hgemm
ENV HGEMM_HOST=0.0.0.0 \
    HGEMM_PORT=8000 \
    HGEMM_BACKEND=auto
EXPOSE 8000

# Ready = kernels loaded and a warm-up GEMM passed; the start period covers loading and warm-up.
HEALTHCHECK --interval=15s --timeout=3s --start-period=120s --retries=3 \
  CMD curl -fsS "http://127.0.0.1:${HGEMM_PORT}/health/ready" > /dev/null || exit 1

CMD ["python", "-m", "service"]
