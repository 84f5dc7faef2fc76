"""The search through the binding: the CLI's answer, SimuMax's search helpers on its own example, and speed."""

import json
import os
import time

import pytest

import simumax_sim
from conftest import SHARED, SOURCE, cli
from simumax_sim import PerfLLM, StrategyConfig

MODEL_8B_SIMUMAX = os.path.join(SHARED, "simumax-configs", "models", "llama3-8b.json")
SYSTEM_A100_SIMUMAX = os.path.join(SHARED, "simumax-configs", "system", "a100_pcie.json")
STRATEGY = os.path.join(SHARED, "simumax-configs", "strategy", "tp1_pp2_dp4_mbs1.json")


def test_search_gives_the_cli_records(tmp_path):
    args = ["--model", MODEL_8B_SIMUMAX, "--system", SYSTEM_A100_SIMUMAX, "--world-size", "16",
            "--global-batch-size", "64", "--seq-len", "4096", "--tp", "1,2,4", "--pp", "1,2,4", "--mbs", "1,2",
            "--recompute", "none,full", "--objective", "mfu"]
    rc, _, stderr = cli("search", *args, "-q", "-o", str(tmp_path / "cli"))
    assert rc == 0, stderr
    with open(tmp_path / "cli" / "search.json") as f:
        expected = json.load(f)
    got = simumax_sim.search(MODEL_8B_SIMUMAX, SYSTEM_A100_SIMUMAX, 16, 64, seq_len=4096, tp=[1, 2, 4],
                             pp="1,2,4", mbs=[1, 2], recompute=["none", "full"], objective="mfu")
    records = expected[[k for k, v in expected.items() if isinstance(v, list) and v and "label" in v[0]][0]]
    assert got["records"] == records
    assert got["evaluated"] == expected["evaluated"]
    assert got["best"]["label"] == expected["best"]
    assert [r["rank"] for r in got["ranking"]] == list(range(1, len(got["ranking"]) + 1))


def simumax_example_model():
    # SimuMax's examples/search_strategy_llama3_8b.py, build_perf_model(), with PerfLLM from simumax_sim.
    strategy_dict = StrategyConfig.read_json_file(STRATEGY)
    strategy_dict["enable_recompute"] = False
    strategy_dict["recompute_granularity"] = None
    strategy_dict["recompute_layer_num"] = 0
    perf_model = PerfLLM(fidelity="simumax")  # SimuMax's own numbers are the reference
    perf_model.configure(strategy_config=StrategyConfig.init_from_dict(strategy_dict),
                         model_config=MODEL_8B_SIMUMAX, system_config=SYSTEM_A100_SIMUMAX)
    perf_model.model_config.padded_vocab_size = True
    perf_model.model_config.make_vocab_size_divisible_by = 128
    return perf_model


def test_micro_batch_helper_agrees_with_simumax_on_its_example():
    perf = simumax_example_model()
    sizes, counts, peaks, costs = perf.search_max_micro_batch_size_fixed_gbs(
        pp_size=perf.strategy.pp_size, dp_size=perf.strategy.dp_size, global_batch_size=32, gmi_error=10,
        use_reserved_memory=True, save_all=False, verbose=False)
    # SimuMax: mbs 1, mbc 8, reserved peak 54.1334 GiB on the first stage, iteration 5.5547 s.
    assert (sizes, counts) == ([1], [8])
    assert peaks[0] == {"first_stage": 54.1334, "last_stage": 48.0465}
    assert costs[0].data["duration_time_per_iter"] == "5.5547 s"


def test_max_micro_batch_size_is_the_largest_that_fits():
    perf = simumax_example_model()
    size, peak = perf.search_max_micro_batch_size(micro_batch_num=8)
    limit = perf.system.accelerator["mem_gbs"] * 2**30
    assert size >= 1 and peak <= limit
    assert perf._peak_alloc_bytes(micro_batch_size=size + 1, micro_batch_num=8) > limit
    assert perf.strategy.micro_batch_size == 1  # the configured strategy is untouched


def test_parallel_helper_agrees_with_simumax_on_its_example():
    perf = simumax_example_model()
    all_search_result = {}
    best = perf.search_best_parallel_strategy(
        world_size=8, gmi_error=10, micro_batch_size=1, global_batch_size=32, all_search_result=all_search_result,
        tp_search_list=[1, 2], ep_search_list=[1], pp_search_list=[2], recompute_search_type=["no_recompute"],
        use_reserved_memory=True, dump_path=None, verbose=False)
    # SimuMax: tp1 pp2 dp4 with MFU 0.4866.
    assert best["label"] == "tp1 pp2 dp4 mbs1 mbc8 none zero1 sp"
    assert best["mfu"] == pytest.approx(0.4866, abs=5e-5)
    assert best["label"] in all_search_result["label"]
    # SimuMax's record keys beside ours (dump_paralism_and_recompute_perf).
    assert best["iter_time"] == "5.5547 s" and best["recompute_status"] == "No Recompute"
    assert best["peak_mem_with_reserved"] == {"first_stage": "54.1334 GB", "last_stage": "48.0465 GB"}
    assert best["TGS_per_gpu"] == pytest.approx(best["tokens_per_s"] / 8)
    assert all(len(v) == len(all_search_result["label"]) for v in all_search_result.values())
    # dump_paralism_and_recompute_bw_perf's comm_bw_info: str() of the candidate's net_info, here SimuMax's own
    # (its perf_llama3_8b_tp1_pp2 example is this layout; its tp loops hold one candidate each, so SimuMax's record
    # holds that candidate's calls alone).
    with open(os.path.join(os.path.dirname(__file__), "data", "simumax_net_info.json")) as f:
        simumax = json.load(f)["examples"]["perf_llama3_8b_tp1_pp2"]
    assert best["comm_bw_info"] == str(simumax)
    assert len(all_search_result["comm_bw_info"]) == len(all_search_result["label"])


def test_search_through_the_binding_evaluates_the_bench_space():
    """The space of `simumax-sim bench --only search` (12-layer Llama3-70B on 512 B200s, global batch 1024, from
    SimuMax's default strategy) through the binding, Python's side included (every record converted to a dict).
    Its speed is printed, not asserted: speed is measured by `simumax-sim bench`, not by timed tests."""
    model = os.path.join(SOURCE, "models", "llama3-70b.json")
    with open(model) as f:
        model_dict = json.load(f)
    model_dict["layer_num"] = 12
    system = os.path.join(SOURCE, "platforms", "b200_bf16.json")
    cpu0, wall0 = time.process_time(), time.perf_counter()
    got = simumax_sim.search(model_dict, system, 512, 1024, seq_len=4096, mbs=[1, 2, 4, 8], zero=[0, 1],
                             sp=[True, False], threads=1)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    print(f"search through the binding: {got['evaluated']} evaluations in {cpu:.3f} s CPU ({wall:.3f} s wall): "
          f"{got['evaluated'] / cpu:,.0f} evaluations/s/core")
    assert got["evaluated"] == 1700
    assert len(got["records"]) == got["candidates"]
