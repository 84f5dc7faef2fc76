"""SimuMax v1.2's examples/ run with only `simumax` renamed `simumax_sim` in their imports, and print SimuMax's
numbers when SimuMax's fidelity is asked for from the environment (SIMUMAX_SIM_FIDELITY=simumax), the scripts
left as they are.

The scripts below are our copies of the examples' logic (MooreThreads/SimuMax v1.2, examples/*.py): the same
calls in the same order, on the same shipped configs by name. SimuMax's numbers come from the reference
re-derivation of its time model ($SIMUMAX_SHARED_DIR/reference/simumax_time_oracle.py, which matches SimuMax to
1e-9) and, for the search example, from the output SimuMax's docs record for it.
"""

import importlib.util
import json
import os
import re
import subprocess
import sys

import pytest
from conftest import PACKAGE_PATH, SHARED

import simumax_sim

# examples/perf_*.py: (script, strategy, model, the fields its set_megatron_config sets).
_PAD = {"padded_vocab_size": True, "make_vocab_size_divisible_by": 128}
_MOE = {"moe_pad_expert_input_to_capacity": True, "capacity": 1}
PERF_EXAMPLES = [
    ("perf_llama3_8b_tp1_pp2", "tp1_pp2_dp4_mbs1", "llama3-8b", _PAD),
    ("perf_llama3_8b_tp2", "tp2_pp1_dp4_mbs1", "llama3-8b", _PAD),
    ("perf_llama3_8b_tp4", "tp4_pp1_dp2_mbs1", "llama3-8b", _PAD),
    ("perf_llama3_8b_tp8", "tp8_pp1_dp1_mbs1", "llama3-8b", _PAD),
    ("perf_llama3_70b_layer12_tp1_pp2", "tp1_pp2_dp4_mbs1", "llama3-70b", dict(layer_num=12, **_PAD)),
    ("perf_llama3_70b_layer12_tp2", "tp2_pp1_dp4_mbs1", "llama3-70b", dict(layer_num=12, **_PAD)),
    ("perf_llama3_70b_layer12_tp2_full_recompute", "tp2_pp1_dp4_mbs1_full_recompute", "llama3-70b",
     dict(layer_num=12, **_PAD)),
    ("perf_llama3_70b_layer12_tp2_selective_recompute", "tp2_pp1_dp4_mbs1_selective_recompute", "llama3-70b",
     dict(layer_num=12, **_PAD)),
    ("perf_llama3_70b_layer12_tp4", "tp4_pp1_dp2_mbs1", "llama3-70b", dict(layer_num=12, **_PAD)),
    ("perf_llama3_70b_layer12_tp8", "tp8_pp1_dp1_mbs1", "llama3-70b", dict(layer_num=12, **_PAD)),
    ("perf_deepseekv2_layer4_ep4_pp2", "ep4_pp2_dp4_mbs1", "deepseekv2", dict(layer_num=4, **_MOE, **_PAD)),
    ("perf_deepseekv2_layer4_ep4_pp2_full_recompute", "ep4_pp2_dp4_mbs1_full_recompute", "deepseekv2",
     dict(layer_num=4, **_MOE, **_PAD)),
    ("perf_deepseekv2_layer4_ep4_pp2_selective_recompute", "ep4_pp2_dp4_mbs1_selective_recompute", "deepseekv2",
     dict(layer_num=4, **_MOE, **_PAD)),
    ("perf_deepseekv2_layer4_ep8_pp1", "ep8_pp1_dp8_mbs1", "deepseekv2", dict(layer_num=4, **_MOE, **_PAD)),
]

PERF_SCRIPT = """\
from simumax_sim.core.config import ModelConfig, StrategyConfig, SystemConfig
from simumax_sim.core.perf_llm import PerfLLM
from simumax_sim.utils import get_simu_model_config, get_simu_strategy_config, get_simu_system_config

def set_megatron_config(perf_model:PerfLLM):
{settings}

def main():
    strategy_config_file = get_simu_strategy_config('{strategy}')
    model_config_file = get_simu_model_config('{model}')
    system_config_file = get_simu_system_config('a100_pcie')
    perf_model = PerfLLM()
    perf_model.configure(
        strategy_config=StrategyConfig.init_from_config_file(strategy_config_file),
        model_config=ModelConfig.init_from_config_file(model_config_file),
        system_config=SystemConfig.init_from_config_file(system_config_file),
    )
    model_name = perf_model.model_config.model_name
    system_name = perf_model.system.sys_name
    set_megatron_config(perf_model)
    perf_model.run_estimate()
    perf_model.analysis(f'{{model_name}}_{{system_name}}')

if __name__ == "__main__":
    main()
"""

SIMULATOR_SCRIPT = """\
import argparse
import json
from pathlib import Path

from simumax_sim.core.config import ModelConfig, StrategyConfig, SystemConfig
from simumax_sim.core.perf_llm import PerfLLM
from simumax_sim.utils import get_simu_model_config, get_simu_strategy_config, get_simu_system_config


def build_perf_model():
    perf = PerfLLM()
    perf.configure(
        strategy_config=StrategyConfig.init_from_config_file(get_simu_strategy_config("tp2_pp1_dp4_mbs1")),
        model_config=ModelConfig.init_from_config_file(get_simu_model_config("llama2-tiny")),
        system_config=SystemConfig.init_from_config_file(get_simu_system_config("a100_pcie")),
    )
    perf.model_config.model_name = "llama2-tiny-2layer"
    perf.model_config.layer_num = 2
    return perf


def load_trace_events(trace_path):
    with open(trace_path, "r", encoding="utf-8") as f:
        payload = json.load(f)
    if isinstance(payload, dict):
        return payload.get("traceEvents", [])
    return payload


def summarize_trace(trace_path):
    events = load_trace_events(trace_path)
    slices = [event for event in events if event.get("ph") == "X"]
    ranks = sorted({event.get("pid") for event in slices})
    end_us = max((event.get("ts", 0.0) + event.get("dur", 0.0) for event in slices), default=0.0)
    comm_slices = [event for event in slices
                   if event.get("cat") == "comm" or event.get("args", {}).get("stream_type") == "comm"]
    compute_slices = [event for event in slices if event.get("cat") == "compute"]
    return {"event_count": len(events), "slice_count": len(slices), "compute_slice_count": len(compute_slices),
            "comm_slice_count": len(comm_slices), "rank_count": len(ranks), "duration_ms": end_us / 1000.0}


def summarize_snapshot(snapshot_path):
    with open(snapshot_path, "r", encoding="utf-8") as f:
        snapshot = json.load(f)
    events = snapshot.get("events", [])
    peak_event = max(events, key=lambda event: event.get("allocated_bytes", 0), default={})
    cache_tokens = snapshot.get("cache_tokens", [])
    alloc_tokens = [token for token in cache_tokens if token.get("action") == "alloc"]
    free_tokens = [token for token in cache_tokens if token.get("action") == "free"]
    return {"schema": snapshot.get("schema"), "event_count": len(events),
            "cache_token_alloc_count": len(alloc_tokens), "cache_token_free_count": len(free_tokens),
            "peak_rank": peak_event.get("rank"), "peak_op": peak_event.get("op_name"),
            "peak_phase": peak_event.get("phase"),
            "peak_allocated_gib": peak_event.get("allocated_bytes", 0) / (1024**3)}


def print_summary(save_path):
    trace_path = save_path / "tracing_logs.json"
    memory_result_path = save_path / "simu_memory_result.json"
    snapshot_path = save_path / "simu_memory_snapshot.json"
    memory_viz_path = save_path / "simu_memory_viz_snapshot.pickle"
    print(f"trace: {trace_path}")
    print(json.dumps(summarize_trace(trace_path), indent=2))
    if memory_result_path.exists():
        print(f"memory result: {memory_result_path}")
        print(memory_result_path.read_text(encoding="utf-8"))
    if snapshot_path.exists():
        print(f"memory snapshot: {snapshot_path}")
        print(json.dumps(summarize_snapshot(snapshot_path), indent=2))
    if memory_viz_path.exists():
        print(f"memory viz snapshot: {memory_viz_path}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--output", type=Path, default=Path("simulator_llama2_tiny_a100"))
    parser.add_argument("--no-merge-lanes", action="store_true")
    args = parser.parse_args()
    perf = build_perf_model()
    perf.run_estimate()
    perf.simulate(str(args.output), merge_lanes=not args.no_merge_lanes)
    print_summary(args.output)


if __name__ == "__main__":
    main()
"""

SHOW_SCRIPT = """\
from simumax_sim.utils import show_simu_models, show_simu_system, show_simu_strategy

show_simu_models()
show_simu_system()
show_simu_strategy()
"""

SEARCH_SCRIPT = """\
from pathlib import Path
from pprint import pprint

from simumax_sim.core.config import ModelConfig, StrategyConfig, SystemConfig
from simumax_sim.core.perf_llm import PerfLLM

REPO_ROOT = Path(__file__).resolve().parents[1]


def build_perf_model():
    strategy_dict = StrategyConfig.read_json_file(str(REPO_ROOT / "configs/strategy/tp1_pp2_dp4_mbs1.json"))
    strategy_dict["enable_recompute"] = False
    strategy_dict["recompute_granularity"] = None
    strategy_dict["recompute_layer_num"] = 0
    perf_model = PerfLLM()
    perf_model.configure(
        strategy_config=StrategyConfig.init_from_dict(strategy_dict),
        model_config=ModelConfig.init_from_config_file(str(REPO_ROOT / "configs/models/llama3-8b.json")),
        system_config=SystemConfig.init_from_config_file(str(REPO_ROOT / "configs/system/a100_pcie.json")),
    )
    perf_model.model_config.padded_vocab_size = True
    perf_model.model_config.make_vocab_size_divisible_by = 128
    return perf_model


def search_batch_settings(perf_model):
    print("=== Search batch settings under a fixed global batch size ===")
    sizes, nums, peaks, costs = perf_model.search_max_micro_batch_size_fixed_gbs(
        pp_size=perf_model.strategy.pp_size, dp_size=perf_model.strategy.dp_size, global_batch_size=32,
        gmi_error=10, use_reserved_memory=True, save_all=False, verbose=False)
    result = {
        "micro_batch_size": sizes[0],
        "micro_batch_num": nums[0],
        "peak_mem_gib_by_stage": peaks[0],
        "iter_time": costs[0].data["duration_time_per_iter"],
        "throughput_per_accelerator": costs[0].data["throughput_per_accelerator"],
    }
    pprint(result)


def search_parallel_strategy(perf_model):
    print("\\n=== Search a small parallel-strategy space ===")
    all_search_result = {}
    best_strategy = perf_model.search_best_parallel_strategy(
        world_size=8, gmi_error=10, micro_batch_size=1, global_batch_size=32, all_search_result=all_search_result,
        tp_search_list=[1, 2], ep_search_list=[1], pp_search_list=[2], recompute_search_type=["no_recompute"],
        use_reserved_memory=True, dump_path=None, verbose=False)
    pprint(best_strategy)


def main():
    perf_model = build_perf_model()
    search_batch_settings(perf_model)
    search_parallel_strategy(perf_model)


if __name__ == "__main__":
    main()
"""


def _oracle():
    path = os.path.join(SHARED, "reference", "simumax_time_oracle.py")
    spec = importlib.util.spec_from_file_location("simumax_time_oracle", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _simumax_config(kind, name):
    with open(os.path.join(SHARED, "simumax-configs", kind, name + ".json")) as f:
        return json.load(f)


def _run_script(folder, name, text, *args, fidelity="simumax"):
    """Writes the script `name` into `folder` and runs it there; returns its stdout (asserting exit 0)."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / name
    script.write_text(text)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (PACKAGE_PATH, os.environ.get("PYTHONPATH")) if p))
    env.pop("SIMUMAX_SHARED_DIR", None)  # the shipped configs are found without it
    if fidelity:
        env["SIMUMAX_SIM_FIDELITY"] = fidelity
    else:
        env.pop("SIMUMAX_SIM_FIDELITY", None)
    p = subprocess.run([sys.executable, str(script), *args], cwd=folder, env=env, capture_output=True, text=True)
    assert p.returncode == 0, f"{name}: exit {p.returncode}\n{p.stderr}"
    return p.stdout


def _step_ms(stdout):
    m = re.search(r"^step time\s+([0-9.]+) ms", stdout, re.M)
    assert m, stdout
    return float(m.group(1))


@pytest.mark.parametrize("script,strategy,model,settings", PERF_EXAMPLES, ids=[e[0] for e in PERF_EXAMPLES])
def test_perf_example_prints_simumax_step_time(tmp_path, script, strategy, model, settings):
    lines = "\n".join(f"    perf_model.model_config.{k} = {v!r}" for k, v in settings.items())
    stdout = _run_script(tmp_path, script + ".py", PERF_SCRIPT.format(settings=lines, strategy=strategy, model=model))
    assert "fidelity simumax (SimuMax v1.2's model)" in stdout
    model_dict = dict(_simumax_config("models", model), **settings)
    expected = _oracle().evaluate(_simumax_config("strategy", strategy), model_dict,
                                  _simumax_config("system", "a100_pcie"))["step_ms"]
    assert _step_ms(stdout) == pytest.approx(expected, abs=0.0015)
    # analysis(f'{model_name}_{system_name}') wrote SimuMax's files there, with its strings.
    saved = [d for d in tmp_path.iterdir() if d.is_dir()]
    assert len(saved) == 1, saved
    with open(saved[0] / "compute_result.json") as f:
        duration = json.load(f)["duration_time_per_iter"]
    value, unit = duration.split(" ")
    assert float(value) * (1000 if unit == "s" else 1) == pytest.approx(expected, rel=1e-4)
    with open(saved[0] / "net_info.json") as f:
        _expect_net_info(json.load(f), _simumax_net_info()[script])


def _simumax_net_info():
    """SimuMax's own net_info.json of each perf example (recorded by running SimuMax; data/'s _source)."""
    with open(os.path.join(os.path.dirname(__file__), "data", "simumax_net_info.json")) as f:
        return json.load(f)["examples"]


def _expect_net_info(ours, simumax):
    """Every record SimuMax's compute_net_op_time left, in its order, with its figures (whole numbers may be
    written as integers where SimuMax kept a float literal: equal values)."""
    assert list(ours) == list(simumax)
    for op, stages in simumax.items():
        assert list(ours[op]) == list(stages), op
        for stage, record in stages.items():
            got = ours[op][stage]
            if isinstance(record, dict):
                assert list(got) == list(record), (op, stage)
                for key, value in record.items():
                    if isinstance(value, float):
                        assert got[key] == pytest.approx(value, rel=1e-12), (op, stage, key)
                    else:
                        assert got[key] == value, (op, stage, key)
            else:
                assert got == record, (op, stage)


def test_perf_example_without_the_environment_prints_megatron_fidelity(tmp_path):
    script, strategy, model, settings = PERF_EXAMPLES[0]
    lines = "\n".join(f"    perf_model.model_config.{k} = {v!r}" for k, v in settings.items())
    stdout = _run_script(tmp_path, script + ".py", PERF_SCRIPT.format(settings=lines, strategy=strategy, model=model),
                         fidelity=None)
    # The screen says whose model the number is, and how to get SimuMax's.
    assert "fidelity megatron" in stdout and "--fidelity simumax" in stdout


def test_simulator_trace_snapshot_example(tmp_path):
    stdout = _run_script(tmp_path, "simulator_trace_snapshot.py", SIMULATOR_SCRIPT)
    out = tmp_path / "simulator_llama2_tiny_a100"
    for name in ("tracing_logs.json", "simu_memory_result.json", "simu_memory_snapshot.json",
                 "simu_memory_viz_snapshot.pickle", "summary.json", "trace.json"):
        assert (out / name).is_file(), name
    assert "memory viz snapshot:" in stdout
    trace = json.loads(stdout.split("trace: ")[1].split("\n", 1)[1].split("\nmemory result:")[0])
    assert trace["slice_count"] > 0 and trace["compute_slice_count"] > 0 and trace["comm_slice_count"] > 0
    assert trace["rank_count"] == 1  # merge_lanes=True: one rank per pipeline stage (pp 1)
    with open(out / "summary.json") as f:
        summary = json.load(f)
    assert trace["duration_ms"] == pytest.approx(summary["step_time_ms"], rel=1e-6)
    snapshot = json.loads(stdout.split("memory snapshot: ")[1].split("\n", 1)[1].split("\nmemory viz")[0])
    assert snapshot["schema"] == "simumax_memory_snapshot_v1"
    assert snapshot["cache_token_alloc_count"] > 0
    assert snapshot["peak_allocated_gib"] * (1 << 30) == pytest.approx(summary["peak_alloc_bytes_max"], rel=1e-9)
    # --no-merge-lanes: every rank of the world (tp 2 x dp 4).
    stdout = _run_script(tmp_path, "simulator_trace_snapshot.py", SIMULATOR_SCRIPT, "--output", "all",
                         "--no-merge-lanes")
    trace = json.loads(stdout.split("trace: ")[1].split("\n", 1)[1].split("\nmemory result:")[0])
    assert trace["rank_count"] == 8


def test_show_simu_available_modes_example(tmp_path):
    stdout = _run_script(tmp_path, "show_simu_avaliable_modes.py", SHOW_SCRIPT)
    for header, name in (("Model", "llama3-8b"), ("System", "a100_pcie"), ("Strategy", "tp1_pp2_dp4_mbs1")):
        assert re.search(rf"^{header}\s+{header} Config Path$", stdout, re.M), stdout
        assert re.search(rf"^{re.escape(name)}\s+\S+{re.escape(name)}\.json$", stdout, re.M), stdout


def test_search_strategy_example_prints_simumax_shapes(tmp_path):
    # The example reads REPO_ROOT/configs/{strategy,models,system}: a SimuMax checkout's layout, here our shipped
    # configs under those names.
    configs = tmp_path / "repo" / "configs"
    configs.mkdir(parents=True)
    for ours, simumax in (("strategies", "strategy"), ("models", "models"), ("platforms", "system")):
        os.symlink(os.path.join(simumax_sim.data_dir(), ours), configs / simumax)
    stdout = _run_script(tmp_path / "repo" / "examples", "search_strategy_llama3_8b.py", SEARCH_SCRIPT)
    batch, parallel = stdout.split("=== Search a small parallel-strategy space ===")
    # SimuMax's output for this example (docs): mbs 1, mbc 8, reserved peak {first 54.1334, last 48.0465} GiB,
    # iter 5.5547 s; best tp1 pp2 dp4, mfu 0.4866.
    assert "'micro_batch_size': 1" in batch and "'micro_batch_num': 8" in batch
    assert "'peak_mem_gib_by_stage': {'first_stage': 54.1334, 'last_stage': 48.0465}" in batch
    assert "'iter_time': '5.5547 s'" in batch
    assert re.search(r"'mfu': 0\.4866\d*", parallel), parallel
    assert "tp1.sp1.cp1.ep1.pp2.dp4" in parallel
    for key in ("'TGS_per_gpu':", "'TFLOPS':", "'iter_time': '5.5547 s'", "'peak_mem': {'first_stage': '50.8854 GB'",
                "'peak_mem_with_reserved': {'first_stage': '54.1334 GB'", "'recompute_status': 'No Recompute'"):
        assert key in parallel, key
