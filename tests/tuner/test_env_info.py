"""Where a measurement came from: the commit is read from git, unless the caller states it (a copied tree's git
metadata may be stale)."""
import subprocess

from tuner import env_info


def test_commit_is_head_or_the_stated_one(monkeypatch):
    monkeypatch.delenv("HGEMM_COMMIT", raising=False)
    head = subprocess.run(["git", "-C", str(env_info.REPO_ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    got = env_info.git_commit()
    if head.returncode == 0:
        assert got.split("+")[0] == head.stdout.strip()
    else:
        assert got == "unknown"
    monkeypatch.setenv("HGEMM_COMMIT", "5363b70")
    assert env_info.git_commit() == "5363b70"


def test_host_cpu_reads_the_model_name(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9454 48-Core Processor\n"
                    "processor\t: 1\nmodel name\t: AMD EPYC 9454 48-Core Processor\n")
    assert env_info.host_cpu(info) == "AMD EPYC 9454 48-Core Processor"


def test_host_cpu_without_cpuinfo_falls_back(tmp_path, monkeypatch):
    monkeypatch.setattr(env_info.platform, "processor", lambda: "")
    assert env_info.host_cpu(tmp_path / "absent") == "unknown"
    (tmp_path / "bare").write_text("processor\t: 0\n")
    assert env_info.host_cpu(tmp_path / "bare") == "unknown"


def test_collect_names_the_host():
    meta = env_info.collect()
    assert meta["host_cpu"] and meta["host_cpus"] >= 1 and meta["host"]
