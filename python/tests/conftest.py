"""Shared set-up of the Python API tests (run by ctest: python.*): the package under test, the CLI beside it,
and the configs SimuMax's examples use."""

import json
import os
import subprocess
import sys

import pytest

PACKAGE_PATH = os.environ.get("SIMUMAX_PYTHONPATH")
if PACKAGE_PATH:
    sys.path.insert(0, PACKAGE_PATH)

SHARED = os.environ.get("SIMUMAX_SHARED_DIR", "")
SOURCE = os.environ.get("SIMUMAX_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ.get("SIMUMAX_CLI", "simumax-sim")

MODEL_8B = os.path.join(SOURCE, "models", "llama3-8b.json")
SYSTEM_A100 = os.path.join(SOURCE, "platforms", "a100_pcie.json")
STRATEGY_TP1_PP2 = os.path.join(SHARED, "simumax-configs", "strategy", "tp1_pp2_dp4_mbs1.json")


def cli(*args, cwd=None):
    """Runs simumax-sim; returns (exit code, stdout, stderr)."""
    p = subprocess.run([CLI, *args], capture_output=True, text=True, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


def cli_summary(tmp_path, *args):
    """`simumax-sim run ARGS -o DIR`'s stdout and summary.json (a dict)."""
    out = tmp_path / "cli"
    rc, stdout, stderr = cli("run", *args, "-o", str(out))
    assert rc == 0, stderr
    with open(out / "summary.json") as f:
        return stdout, json.load(f)


@pytest.fixture(autouse=True)
def _needs_shared():
    if not os.path.isfile(STRATEGY_TP1_PP2):
        pytest.fail(f"the shared folder is missing: {STRATEGY_TP1_PP2} (set SIMUMAX_SHARED_DIR)")
