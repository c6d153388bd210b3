"""Shared fixtures: the repository's examples and the `ttdl` command line to compare against."""

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def _find_cli():
    """The `ttdl` binary: $TTDL_CLI, else the newest of the workspace's release and debug
    builds."""
    named = os.environ.get("TTDL_CLI")
    if named:
        return Path(named)
    built = [ROOT / "target" / p / "ttdl" for p in ("release", "debug")]
    built = [p for p in built if p.exists()]
    return max(built, key=lambda p: p.stat().st_mtime) if built else None


@pytest.fixture(scope="session")
def cli():
    """Runs the command line and returns its standard output; the tests compare the Python
    package's figures with it. CI names the binary with TTDL_CLI, so there it must exist."""
    path = _find_cli()
    if path is None:
        pytest.skip("no ttdl binary built (cargo build --release, or set TTDL_CLI)")
    assert path.exists(), f"TTDL_CLI names {path}, which does not exist"

    def run(*args):
        done = subprocess.run(
            [str(path), *map(str, args)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    run.json = lambda *args: json.loads(run(*args, "--format", "json"))
    return run


@pytest.fixture
def example():
    return lambda name: EXAMPLES / name
