"""SimuMax's examples/perf_llama3_8b_tp1_pp2.py, with only its imports changed (python/examples/), prints the
numbers `simumax-sim run` prints for the same three configs, and saves the same summary.json."""

import json
import os
import subprocess
import sys

from conftest import PACKAGE_PATH, SOURCE, cli_summary

import simumax_sim

EXAMPLE = os.path.join(SOURCE, "python", "examples", "perf_llama3_8b_tp1_pp2.py")


def test_ported_example_prints_what_the_cli_prints(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (PACKAGE_PATH, os.environ.get("PYTHONPATH")) if p))
    cwd = tmp_path / "example"
    cwd.mkdir()
    p = subprocess.run([sys.executable, EXAMPLE], cwd=cwd, env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    stdout, expected = cli_summary(
        tmp_path, "--model", simumax_sim.get_simu_model_config("llama3-8b"),
        "--strategy", simumax_sim.get_simu_strategy_config("tp1_pp2_dp4_mbs1"),
        "--system", simumax_sim.get_simu_system_config("a100_pcie"))
    table = stdout.split("\nwrote ")[0]
    assert p.stdout.split("\nwrote ")[0] == table
    assert f"{expected['step_time_ms']:.3f}" in table
    # analysis(f'{model_name}_{system_name}') saved the run there, as SimuMax saves its files.
    saved = cwd / "llama3_8b_a100_pcie_bf16" / "summary.json"
    assert p.stdout.rstrip().endswith(f"wrote {saved.relative_to(cwd)}")
    with open(saved) as f:
        assert json.load(f) == expected
