"""The Python API gives what the CLI gives: PerfLLM and run() against `simumax-sim run` on the same configs."""

import json
import os
import subprocess
import sys

import pytest

import simumax_sim
from conftest import MODEL_8B, SHARED, SOURCE, STRATEGY_TP1_PP2, SYSTEM_A100, cli, cli_summary
from simumax_sim import ModelConfig, PerfLLM, StrategyConfig, SystemConfig


def configured(**kwargs):
    perf = PerfLLM(**kwargs)
    perf.configure(strategy_config=STRATEGY_TP1_PP2, model_config=MODEL_8B, system_config=SYSTEM_A100)
    return perf


def test_perfllm_summary_is_the_cli_summary(tmp_path):
    _, expected = cli_summary(tmp_path, "--model", MODEL_8B, "--strategy", STRATEGY_TP1_PP2, "--system", SYSTEM_A100)
    perf = configured()
    perf.run_estimate()
    assert perf.summary() == expected


def test_configs_as_paths_dicts_and_objects_give_one_answer():
    with open(MODEL_8B) as f:
        model = json.load(f)
    answers = []
    for m, s, y in [
        (MODEL_8B, STRATEGY_TP1_PP2, SYSTEM_A100),
        (model, StrategyConfig.read_json_file(STRATEGY_TP1_PP2), SystemConfig.read_json_file(SYSTEM_A100)),
        (ModelConfig.init_from_dict(model), StrategyConfig.init_from_config_file(STRATEGY_TP1_PP2),
         SystemConfig.init_from_config_file(SYSTEM_A100)),
    ]:
        perf = PerfLLM()
        perf.configure(strategy_config=s, model_config=m, system_config=y)
        perf.run_estimate()
        summary = perf.summary()
        del summary["name"]  # "<model stem>_<strategy stem>": a dict has no file name
        answers.append(summary)
    assert answers[0] == answers[1] == answers[2]


def test_attributes_read_and_write_the_config():
    perf = configured()
    assert perf.model_config.model_name == "llama3_8b"
    assert perf.strategy.pp_size == 2 and perf.strategy.dp_size == 4
    perf.run_estimate()
    base = perf.summary()["step_time_ms"]
    perf.strategy.micro_batch_num = 2 * perf.strategy.micro_batch_num
    perf.run_estimate()
    assert perf.summary()["step_time_ms"] > 1.5 * base
    with pytest.raises(AttributeError, match="no field 'not_a_field'"):
        perf.strategy.not_a_field


def test_analysis_prints_the_cli_table_and_returns_simumax_keys(tmp_path, capsys):
    stdout, expected = cli_summary(tmp_path, "--model", MODEL_8B, "--strategy", STRATEGY_TP1_PP2, "--system", SYSTEM_A100)
    perf = configured()
    perf.run_estimate()
    out = perf.analysis(tmp_path / "saved")
    printed = capsys.readouterr().out
    assert printed.split("\nwrote ")[0] == stdout.split("\nwrote ")[0]
    # SimuMax's keys and strings; our numbers under "summary".
    assert out["duration_time_per_iter"] == f"{expected['step_time_ms'] / 1000:.4f} s"
    assert out["peak_mem"] == {"first_stage": "50.8854 GB", "last_stage": "45.1637 GB"}
    assert out["mfu"] == expected["mfu"]
    assert out["summary"] == expected
    assert out.data is out
    with open(tmp_path / "saved" / "summary.json") as f:
        assert json.load(f) == expected
    # SimuMax's own files of analysis(save_path), the same bytes as `run --simumax-outputs` writes.
    cli_dir = tmp_path / "cli_simumax"
    rc, _, stderr = cli("run", "--model", MODEL_8B, "--strategy", STRATEGY_TP1_PP2, "--system", SYSTEM_A100,
                        "--simumax-outputs", "-q", "-o", str(cli_dir))
    assert rc == 0, stderr
    for name in ("compute_result.json", "mem_result.json", "base_info.json"):
        assert (tmp_path / "saved" / name).read_bytes() == (cli_dir / name).read_bytes(), name


def test_analysis_mem_and_cost_follow_simumax_layout():
    perf = configured()
    perf.run_estimate()
    mem = perf.analysis_mem()
    assert sorted(mem) == ["first_stage", "last_stage"]
    stages = perf.stage_table()
    assert [s["stage"] for s in stages] == [0, 1]
    # SimuMax's strings, and beside them the stage's memory in bytes.
    assert mem["first_stage"]["peak_mem"] == f"{stages[0]['memory']['peak_alloc_bytes'] / 2**30:.4f} GB"
    assert mem["first_stage"]["peak_alloc_bytes"] == stages[0]["memory"]["peak_alloc_bytes"]
    assert mem["last_stage"]["peak_mem_with_reserved"] == f"{stages[1]['memory']['peak_reserved_bytes'] / 2**30:.4f} GB"
    assert perf.get_pp_stage_peak_mem(mem, "peak_mem") == {
        "first_stage": pytest.approx(stages[0]["memory"]["peak_alloc_bytes"], rel=1e-4),
        "last_stage": pytest.approx(stages[1]["memory"]["peak_alloc_bytes"], rel=1e-4)}
    cost = perf.analysis_cost()
    assert cost["duration_time_per_iter"] == f"{perf.summary()['step_time_ms'] / 1000:.4f} s"
    assert cost["summary"]["step_time_ms"] == perf.summary()["step_time_ms"]
    assert sorted(cost["all_chunk_times"]) == ["first_stage_chunk", "last_stage_chunk"]
    # pp 1: one flat dict, as SimuMax's mem_result.json
    perf.strategy.pp_size = 1
    perf.strategy.world_size = 4
    perf.run_estimate()
    assert "peak_mem" in perf.analysis_mem()


def test_run_takes_a_scenario_file_or_dict(tmp_path):
    scenario = os.path.join(SOURCE, "scenarios", "examples", "llama3-8b_tp1_pp2_dp4_mbs1_a100.json")
    _, expected = cli_summary(tmp_path, scenario)
    result = simumax_sim.run(scenario)
    assert dict(result) == expected
    assert result.stages == expected["stages"]
    assert "step" in result.table
    as_dict = {"name": expected["name"], "model": MODEL_8B, "strategy": STRATEGY_TP1_PP2, "system": SYSTEM_A100}
    assert dict(simumax_sim.run(as_dict)) == expected
    written = simumax_sim.run(scenario, out=tmp_path / "py", trace=True, memory=True)
    assert sorted(os.path.basename(p) for p in written.files) == [
        "memory_snapshot.json", "memory_snapshot.pickle", "memory_timeline.json", "summary.json", "trace.json"]
    # A later run into the same folder leaves none of the earlier run's files beside its own.
    (tmp_path / "py" / "notes.txt").write_text("the user's")
    simumax_sim.run(scenario, out=tmp_path / "py")
    assert sorted(os.listdir(tmp_path / "py")) == ["notes.txt", "summary.json"]


def test_run_exposes_the_cli_ranks_json_rows(tmp_path):
    scenario = os.path.join(SOURCE, "scenarios", "examples", "llama3-8b_tp1_pp2_dp4_mbs1_a100.json")
    out = tmp_path / "cli-ranks"
    rc, _, stderr = cli("run", scenario, "--ranks", "all", "-q", "-o", str(out))
    assert rc == 0, stderr
    with open(out / "ranks.json") as f:
        expected = json.load(f)
    result = simumax_sim.run(scenario, ranks="all")
    assert len(result.ranks) == 8
    assert result.ranks == expected["ranks"]
    slowest = max(result.ranks, key=lambda r: (r["late_ms"], -r["rank"]))
    assert slowest["rank"] == expected["slowest_rank"]
    assert [r["stage"] for r in simumax_sim.run(scenario).ranks] == [0, 1]


def test_simulate_writes_the_step_op_by_op(tmp_path):
    perf = configured()
    perf.run_estimate()
    out = perf.simulate(tmp_path / "sim")
    assert out["summary"]["granularity"] == "op"
    assert out["summary"]["step_time_ms"] == pytest.approx(perf.summary()["step_time_ms"], rel=1e-9)
    for path in out["files"]:
        assert os.path.getsize(path) > 0
    with open(tmp_path / "sim" / "trace.json") as f:
        assert len(json.load(f)["traceEvents"]) > 1000


def test_data_dir_is_beside_the_module():
    data = simumax_sim.data_dir()
    assert data.endswith(os.path.join("share", "simumax-sim"))
    assert os.path.isfile(os.path.join(data, "data", "kernel_classes.json"))
    assert simumax_sim.get_simu_model_config("llama3-8b") == os.path.join(data, "models", "llama3-8b.json")
    # SimuMax's strategies are shipped: no environment variable needed (issue 34), and they are SimuMax's figures.
    strategy = simumax_sim.get_simu_strategy_config("tp1_pp2_dp4_mbs1")
    assert strategy == os.path.join(data, "strategies", "tp1_pp2_dp4_mbs1.json")
    env = dict(os.environ)
    env.pop("SIMUMAX_SHARED_DIR", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)  # the package under test
    code = "import simumax_sim; print(simumax_sim.get_simu_strategy_config('tp1_pp2_dp4_mbs1'))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0 and out.stdout.strip() == strategy, out.stderr
    with open(strategy) as f, open(os.path.join(SHARED, "simumax-configs", "strategy", "tp1_pp2_dp4_mbs1.json")) as g:
        assert json.load(f) == json.load(g)
    with pytest.raises(FileNotFoundError, match="names: .*llama3-8b"):
        simumax_sim.get_simu_model_config("llama9")


def test_version_is_the_cli_version():
    rc, out, _ = cli("--version")
    assert rc == 0
    assert out.strip() == "simumax-sim " + simumax_sim.__version__
