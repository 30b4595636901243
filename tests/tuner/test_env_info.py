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
