"""PerfLLM, SimuMax's entry point, over simumax-sim's engine in this process; and run(), one scenario.

The calls and their order are SimuMax's: configure(), run_estimate(), then analysis() / analysis_mem() /
analysis_cost(), simulate(path) and the search helpers (searches.py). Results are plain dicts (Result, a dict
whose .data is itself, as SimuMax's Result objects keep theirs in .data) of numbers: times in ms, memory in
bytes (GiB where the key says so), where SimuMax returns formatted strings.
"""

import json
import os

from simumax_sim import _core
from simumax_sim.configs import ModelConfig, StrategyConfig, SystemConfig
from simumax_sim.results import Result, ranks_of, stage_key, summary_of
from simumax_sim.searches import SearchHelpers


class PerfLLM(SearchHelpers):
    """SimuMax's PerfLLM. `executor` ('fast', or 'sim': SimGrid, once per process), `granularity`
    ('chunk', 'layer', 'op'), `ranks` ('stages', 'all') and `fidelity` ('megatron', 'simumax'; None: the
    strategy's) are the options of `simumax-sim run`."""

    def __init__(self, executor="fast", granularity="layer", ranks="stages", fidelity=None):
        self.model_config = None
        self.strategy = None
        self.system = None
        self._options = {"executor": executor, "granularity": granularity, "ranks": ranks,
                         "fidelity": fidelity or ""}
        self._run = None

    # configuration -------------------------------------------------------------------------------------
    def configure(self, strategy_config, model_config, system_config, debug_points=None,
                  debug_points_last_stage=None):
        """Each config a ModelConfig/StrategyConfig/SystemConfig, a path to a SimuMax JSON file or a dict.
        Checks the three together (raises ConfigError naming the file and field)."""
        if debug_points or debug_points_last_stage:
            raise _core.UsageError("debug_points: SimuMax's per-op debug prints are not supported; "
                                   "use simulate(path) for every op's timing")
        self.strategy = StrategyConfig.coerce(strategy_config, "strategy_config")
        self.model_config = ModelConfig.coerce(model_config, "model_config")
        self.system = SystemConfig.coerce(system_config, "system_config")
        self._run = None
        self.scenario()
        return self

    def scenario(self, check=True):
        """The engine's scenario of the current configs (read again: attributes may have changed)."""
        if self.strategy is None:
            raise _core.UsageError("call configure(strategy_config=..., model_config=..., system_config=...) first")
        name = f"{self.model_config.stem()}_{self.strategy.stem()}"
        return _core.scenario_from_texts(
            self.model_config.json_text(), self.model_config.label(),
            self.strategy.json_text(), self.strategy.label(),
            self.system.json_text(), self.system.label(), name, check)

    # estimation ----------------------------------------------------------------------------------------
    def run_estimate(self):
        """Simulates one step of the configured job (returns nothing, as SimuMax's)."""
        self._run = _core.run(self.scenario(), **self._options)

    def _require_run(self):
        if self._run is None:
            raise _core.UsageError("call run_estimate() first")
        return self._run

    def summary(self):
        """summary.json's fields (what `simumax-sim run` writes), as a dict."""
        return summary_of(self._require_run())

    def table(self):
        """The table `simumax-sim run` prints."""
        return self._require_run().summary_table()

    def stage_table(self):
        """One dict per pipeline stage: time breakdown (ms) and memory (bytes) of summary.json's stages."""
        return [dict(s) for s in self.summary()["stages"]]

    def analysis_mem(self):
        """Per stage (SimuMax's layout: one flat dict when pp is 1, else first_stage / pp_stage_N /
        last_stage): peak_mem and peak_mem_with_reserved (bytes), model_mem (weights + gradients + optimizer
        states), the breakdown, and SimuMax's batch fields."""
        s = self.summary()
        pp = s["parallel"]["pp"]
        out = Result()
        for st in s["stages"]:
            m = st["memory"]
            entry = {
                "micro_batch_num": s["batch"]["micro_batch_num"],
                "micro_batch_size": s["batch"]["micro_batch_size"],
                "cached_micro_batch_num": m["cached_micro_batch_num"],
                "model_mem": m["weight_bytes"] + m["grad_bytes"] + m["optimizer_state_bytes"],
                "peak_mem": m["peak_alloc_bytes"],
                "peak_mem_with_reserved": m["peak_reserved_bytes"],
                "layers": st["layers"],
            }
            entry.update(m)
            if pp == 1:
                return Result(entry)
            out[stage_key(st, pp)] = entry
        return out

    def analysis_cost(self):
        """SimuMax's compute_result headline keys (duration_time_per_iter in ms, throughput_per_accelerator in
        tokens/s/GPU, TFLOP/s per GPU, mfu, straggle_ratio) and all_chunk_times per stage (ms)."""
        s = self.summary()
        chunks = {}
        for st in s["stages"]:
            chunks[stage_key(st, s["parallel"]["pp"])] = {
                "duration_time": st["duration_ms"], "chunk_time": st["chunk_time_ms"],
                "fwd_time": st["fwd_ms"], "bwd_time": st["bwd_ms"], "bubble_time": st["bubble_ms"],
                "dp_comm_time": st["dp_comm_ms"], "optimizer_time": st["optimizer_ms"]}
        return Result({
            "duration_time_per_iter": s["step_time_ms"],
            "throughput_per_accelerator": s["tokens_per_s_per_gpu"],
            "throughput per GPU (TFLOP/s/GPU)": s["tflops_per_gpu"],
            "mfu": s["mfu"],
            "all_tokens_per_iter": s["tokens_per_iter"],
            "straggle_ratio": s["straggler_ratio"],
            "all_chunk_times": chunks,
        })

    def analysis(self, save_path=None, console_log=True):
        """Prints the table `simumax-sim run` prints (console_log); when `save_path` is given, writes into it
        (created) SimuMax's own files of analysis(save_path) (compute_result.json, mem_result.json,
        base_info.json, as `run --simumax-outputs`) and our summary.json; returns SimuMax's summary keys (times in
        ms, memory in GiB) plus 'summary'."""
        run = self._require_run()
        if console_log:
            print(run.summary_table(), end="")
        if save_path is not None:
            os.makedirs(save_path, exist_ok=True)
            for written in run.write_simumax_results(os.fspath(save_path)):
                if console_log:
                    print(f"\nwrote {written}", end="")
            path = run.write_summary(os.fspath(save_path))
            if console_log:
                print(f"\nwrote {path}")
        s = self.summary()
        gib = float(1 << 30)
        p = s["parallel"]
        return Result({
            "model": self.model_config._data.get("model_name", self.model_config.stem()),
            "system": self.system._data.get("sys_name", self.system.stem()),
            "peak_mem": s["peak_alloc_bytes_max"] / gib,
            "peak_mem_with_reserved": s["peak_reserved_bytes_max"] / gib,
            "duration_time_per_iter": s["step_time_ms"],
            "TFLOPS": s["tflops_per_gpu"],
            "TGS_per_gpu": s["tokens_per_s_per_gpu"],
            "mfu": s["mfu"],
            "parallelism": ".".join(f"{k}{p[k]}" for k in ("tp", "cp", "pp", "dp", "ep", "etp", "edp")),
            "net": s["nets"],
            "summary": s,
        })

    def simulate(self, save_path, merge_lanes=True, trace_ranks="stages", trace_format="chrome", executor=None):
        """Simulates the step with every kernel and collective as its own task (op granularity) and writes into
        `save_path` (created) summary.json, the trace (`run --trace`) and the memory files (`run --memory`).
        Returns {"files": [paths], "summary": summary.json's dict}. `merge_lanes` is accepted for SimuMax's
        signature: our trace always has one lane per stream."""
        del merge_lanes
        options = dict(self._options, granularity="op")
        if executor is not None:
            options["executor"] = executor
        run = _core.run(self.scenario(), **options)
        os.makedirs(save_path, exist_ok=True)
        folder = os.fspath(save_path)
        files = [run.write_summary(folder), run.write_trace(folder, trace_ranks, trace_format)]
        files += run.write_memory(folder, trace_ranks)
        return Result({"files": files, "summary": summary_of(run)})


def _scenario(scenario):
    if isinstance(scenario, (str, os.PathLike)):
        return _core.load_scenario(os.fspath(scenario))
    if isinstance(scenario, dict):
        # Relative paths inside resolve against the working directory.
        return _core.load_scenario_text(json.dumps(scenario, allow_nan=False), "<scenario dict>")
    raise TypeError(f"scenario: expected a path to a scenario file or a dict, got {type(scenario).__name__}")


def run(scenario, executor="fast", granularity="layer", ranks="stages", platform=None, fidelity=None,
        out=None, trace=False, memory=False):
    """`simumax-sim run scenario`: a scenario file's path, or the same as a dict. Returns summary.json's fields
    (a Result) with `.table` (the printed table), `.stages` (one dict per stage) and `.ranks` (ranks.json's rows,
    one dict per simulated rank); with `out` (a folder,
    created), writes summary.json there, and trace.json / the memory files when asked, listed in `.files`."""
    r = _core.run(_scenario(scenario), executor=executor, granularity=granularity, ranks=ranks,
                  platform=os.fspath(platform) if platform is not None else None, fidelity=fidelity or "")
    result = summary_of(r)
    result.table = r.summary_table()
    result.stages = result["stages"]
    result.ranks = ranks_of(r)
    if out is not None:
        os.makedirs(out, exist_ok=True)
        result.files = [r.write_summary(os.fspath(out))]
        if trace:
            result.files.append(r.write_trace(os.fspath(out)))
        if memory:
            result.files += r.write_memory(os.fspath(out))
    return result
