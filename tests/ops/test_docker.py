"""Dockerfile, .dockerignore and docker-compose.yml: no Docker engine here, so the compose file goes through the real
parser (`docker-compose config`) and the Dockerfile's COPY sources are checked against the tree and .dockerignore."""
from __future__ import annotations

import fnmatch
import re
import subprocess
import sys
from pathlib import Path

import yaml

from .conftest import REPO, require_tool, run_tool

DOCKERFILE = (REPO / "Dockerfile").read_text()


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    joined = re.sub(r"\\\n", " ", "\n".join(line for line in DOCKERFILE.splitlines()
                                            if not line.lstrip().startswith("#")))
    found = []
    for line in joined.splitlines():
        if line.strip():
            word, _, rest = line.strip().partition(" ")
            found.append((word.upper(), rest.strip()))
    return found


def copy_sources() -> list[str]:
    sources = []
    for word, rest in instructions():
        if word in ("COPY", "ADD"):
            args = [arg for arg in rest.split() if not arg.startswith("--")]
            assert "--from" not in rest, "multi-stage COPY --from is not checked here"
            sources.extend(args[:-1])
    return sources


def dockerignore_allows(path: str) -> bool:
    """Docker's rule: the last matching pattern wins; `!` re-includes. Enough of it for this allowlist file."""
    allowed = True
    for raw in (REPO / ".dockerignore").read_text().splitlines():
        pattern = raw.strip()
        if not pattern or pattern.startswith("#"):
            continue
        negate = pattern.startswith("!")
        pattern = pattern.lstrip("!").rstrip("/")
        candidates = [path] + ([path.split("/", i)[-1] for i in range(1, path.count("/") + 1)]
                               if pattern.startswith("**/") else [])
        bare = pattern[3:] if pattern.startswith("**/") else pattern
        if any(fnmatch.fnmatch(c, bare) or c.startswith(bare + "/") for c in candidates):
            allowed = negate
    return allowed


def test_every_copy_source_exists_and_is_not_docker_ignored():
    sources = copy_sources()
    assert "requirements/" in sources and "service/" in sources and "kernels/" in sources
    for source in sources:
        path = REPO / source
        assert path.exists(), f"Dockerfile copies {source}, which does not exist"
        assert dockerignore_allows(source.rstrip("/")), f".dockerignore excludes {source}"


def test_dockerignore_keeps_local_state_out_of_the_context():
    for path in (".venv", ".git", "tests", "loadtest", ".whl", "service/__pycache__"):
        assert not dockerignore_allows(path), f"{path} would be sent to the Docker build context"


def test_dockerfile_builds_kernels_for_a_configurable_arch_list_and_runs_as_non_root():
    words = dict(instructions())
    assert words["FROM"].startswith("${CUDA_IMAGE}") and "devel" in DOCKERFILE.split("ARG CUDA_IMAGE=")[1].split()[0]
    assert 'ARG CUDA_ARCHS="sm90,sm80"' in DOCKERFILE
    assert 'python -m kernels.build --set "${KERNEL_SETS}" --arch "${CUDA_ARCHS}"' in DOCKERFILE
    assert "-r requirements/runtime.txt" in DOCKERFILE and "requirements/torch-cpu.txt" in DOCKERFILE
    users = [rest for word, rest in instructions() if word == "USER"]
    assert users and users[-1] not in ("root", "0")
    assert [rest for word, rest in instructions() if word == "CMD"][-1] == '["python", "-m", "service"]'


def test_the_image_builds_every_variant_the_committed_tables_name():
    from kernels import space
    from kernels.tuned_tables import load_tables

    sets = re.search(r'ARG KERNEL_SETS="([^"]+)"', DOCKERFILE).group(1)
    built = {cfg.name for name in sets.split(",") for cfg in space.variant_set(name)}
    named = {choice.kernel for table in load_tables("sm90").values() for entry in table.entries.values()
             for choice in (entry, entry.graph) if choice is not None and not choice.is_arm}
    assert named and named <= built, sorted(named - built)[:5]
    # the compose file builds the same sets unless told otherwise, and the arch list keeps every one of them
    assert f'KERNEL_SETS: "${{KERNEL_SETS:-{sets}}}"' in (REPO / "docker-compose.yml").read_text()
    archs = re.search(r'ARG CUDA_ARCHS="([^"]+)"', DOCKERFILE).group(1).split(",")
    assert all(space.config_named(name).arch in archs for name in named)


def test_healthcheck_probes_a_route_the_service_serves():
    health = next(rest for word, rest in instructions() if word == "HEALTHCHECK")
    path = re.search(r"https?://[^/\s\"]+(/[^\s\"]*)", health).group(1)
    from service.app import create_app
    assert path == "/health/ready"
    assert path in {getattr(route, "path", None) for route in create_app().routes}


def test_kernel_build_cli_takes_the_dockerfile_options():
    result = subprocess.run([sys.executable, "-m", "kernels.build", "--help"], capture_output=True, text=True,
                            cwd=REPO, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "--set" in result.stdout and "--arch" in result.stdout


def test_docker_compose_config_validates(tmp_path):
    compose = require_tool("docker-compose")
    out = run_tool([compose, "-f", str(REPO / "docker-compose.yml"), "config"], cwd=REPO)
    config = yaml.safe_load(out.stdout)
    assert set(config["services"]) == {"api", "prometheus", "alertmanager", "grafana", "tuner"}
    for gpu_service in ("api", "tuner"):
        devices = config["services"][gpu_service]["deploy"]["resources"]["reservations"]["devices"]
        assert devices[0]["driver"] == "nvidia" and "gpu" in devices[0]["capabilities"]
    for service in config["services"].values():
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("/"):   # a bind mount, made absolute by the parser
                assert Path(source).exists(), f"compose mounts {source}, which does not exist"


def test_the_optional_tuner_writes_where_the_api_reads_and_calls_the_api_it_follows():
    """`docker compose --profile tuning up`: tuner.follow's --tables-dir is the api's HGEMM_EXTRA_TABLES, on a volume
    both mount; --service is the api's in-network address and port; its arguments parse."""
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    api, tuner = compose["services"]["api"], compose["services"]["tuner"]
    assert tuner["profiles"] == ["tuning"] and tuner["image"] == api["image"]
    command = tuner["command"]
    assert command[:3] == ["python", "-m", "tuner.follow"]
    tables_dir = command[command.index("--tables-dir") + 1]
    assert api["environment"]["HGEMM_EXTRA_TABLES"] == "${HGEMM_EXTRA_TABLES:-%s}" % tables_dir
    volume = next(v for v in api["volumes"] if v.endswith(":" + tables_dir))
    assert volume in tuner["volumes"] and volume.split(":")[0] in compose["volumes"]
    assert command[command.index("--service") + 1] == f"http://api:{api['environment']['HGEMM_PORT']}"
    assert f"mkdir -p {tables_dir}" in DOCKERFILE   # created in the image, so the volume starts owned by hgemm

    from tuner.follow import build_parser
    own = command[3:command.index("--")]
    args = build_parser().parse_args([a.replace("${TUNE_INTERVAL_S:-300}", "300")
                                       .replace("${TUNE_MIN_REQUESTS:-100}", "100") for a in own])
    assert args.tables_dir == tables_dir and args.interval == 300


def test_compose_mounts_the_monitoring_config_that_prometheus_expects():
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    prometheus = yaml.safe_load((REPO / "prometheus" / "prometheus.yml").read_text())
    scrape = next(job for job in prometheus["scrape_configs"] if job["job_name"] == "hgemm")
    host, port = scrape["static_configs"][0]["targets"][0].split(":")
    assert host in compose["services"] and any(p.endswith(f":{port}") for p in compose["services"][host]["ports"])
    alertmanager = prometheus["alerting"]["alertmanagers"][0]["static_configs"][0]["targets"][0].split(":")[0]
    assert alertmanager in compose["services"]
    assert "./prometheus:/etc/prometheus:ro" in compose["services"]["prometheus"]["volumes"]
    assert "./alertmanager:/etc/alertmanager:ro" in compose["services"]["alertmanager"]["volumes"]
