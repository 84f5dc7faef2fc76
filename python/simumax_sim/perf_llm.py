"""PerfLLM, SimuMax's entry point, over simumax-sim's engine in this process; and run(), one scenario.

The calls and their order are SimuMax's: configure(), run_estimate(), then analysis() / analysis_mem() /
analysis_cost(), simulate(path) and the search helpers (searches.py). Results are SimuMax's dicts (Result, a
dict whose .data is itself, as SimuMax's Result objects keep theirs in .data) with SimuMax's keys and its
formatted strings ("5.5547 s", "54.1334 GB"); our numbers sit beside them: summary.json's fields under
"summary" (times in ms, memory in bytes), and each stage's memory in bytes in analysis_mem()'s stage dicts.

The fidelity is the strategy's ("megatron" unless it says otherwise), or the environment's SIMUMAX_SIM_FIDELITY
("simumax": SimuMax's own model, so that a SimuMax script prints SimuMax's numbers unchanged), or PerfLLM's
`fidelity` argument, which wins.
"""

import json
import os
import shutil

from simumax_sim import _core
from simumax_sim.configs import ModelConfig, StrategyConfig, SystemConfig
from simumax_sim.results import Result, ranks_of, summary_of
from simumax_sim.searches import SearchHelpers


class PerfLLM(SearchHelpers):
    """SimuMax's PerfLLM. `executor` ('fast', or 'sim': SimGrid, once per process), `granularity`
    ('chunk', 'layer', 'op'), `ranks` ('stages', 'all') and `fidelity` ('megatron', 'simumax'; None:
    $SIMUMAX_SIM_FIDELITY, else the strategy's) are the options of `simumax-sim run`."""

    def __init__(self, executor="fast", granularity="layer", ranks="stages", fidelity=None):
        self.model_config = None
        self.strategy = None
        self.system = None
        self._options = {"executor": executor, "granularity": granularity, "ranks": ranks,
                         "fidelity": fidelity or os.environ.get("SIMUMAX_SIM_FIDELITY", "")}
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

    @staticmethod
    def _simumax_json(file, run):
        return Result(json.loads(run.simumax_json(file)))

    def analysis_mem(self):
        """SimuMax's mem_result (its analysis_mem()): one flat dict when pp is 1, else first_stage /
        middle_stage / last_stage (interleaved: pp_stage_N), sizes as its strings (peak_mem,
        peak_mem_with_reserved, model_mem, ...); beside them in each stage dict, that stage's memory of
        summary.json in bytes (peak_alloc_bytes, peak_reserved_bytes, weight_bytes, ...)."""
        return self._analysis_mem(self._require_run())

    def _analysis_mem(self, run):
        mem = self._simumax_json("mem_result", run)
        stages = summary_of(run)["stages"]
        if "peak_mem" in mem:
            mem.update(stages[0]["memory"])
            return mem
        for key, entry in mem.items():
            entry.update(stages[_stage_index(key, len(stages))]["memory"])
        return mem

    def analysis_cost(self):
        """SimuMax's compute_result (its analysis_cost()): duration_time_per_iter ("5.5547 s"),
        throughput_per_accelerator (tokens/s/GPU), "throughput per GPU (TFLOP/s/GPU)", mfu, straggle_ratio,
        all_chunk_times, breakdown_result, comm_details, compute_details, flops_info, param_numel_info; and
        "summary": summary.json's fields (numbers: times in ms)."""
        return self._analysis_cost(self._require_run())

    def _analysis_cost(self, run):
        cost = self._simumax_json("compute_result", run)
        cost["summary"] = summary_of(run)
        return cost

    def analysis(self, save_path=None, console_log=True):
        """Prints the table `simumax-sim run` prints (console_log); when `save_path` is given, writes into it
        (created) SimuMax's own files of analysis(save_path) (compute_result.json, mem_result.json,
        base_info.json, as `run --simumax-outputs`) and our summary.json. Returns SimuMax's keys and strings
        (model, model_type, params, system, peak_mem, peak_mem_with_reserved, duration_time_per_iter, TFLOPS,
        TGS_per_gpu, mfu, parallelism, recompute, dtype, net) plus 'summary' (summary.json's numbers)."""
        run = self._require_run()
        if console_log:
            print(run.summary_table(), end="")
        if save_path is not None:
            os.makedirs(save_path, exist_ok=True)
            _core.remove_earlier_run(os.fspath(save_path))
            for written in run.write_simumax_results(os.fspath(save_path)):
                if console_log:
                    print(f"\nwrote {written}", end="")
            path = run.write_summary(os.fspath(save_path))
            if console_log:
                print(f"\nwrote {path}")
        return self._simumax_summary(run)

    def _simumax_summary(self, run, cost=None, strings=None):
        # PerfLLM.analysis's return value: peak memory per stage as analysis_mem's strings. `cost` (compute_result)
        # and `strings` (simumax_strings) when the caller has them already.
        mem = self._simumax_json("mem_result", run)
        cost = cost if cost is not None else self._simumax_json("compute_result", run)
        strings = strings if strings is not None else run.simumax_strings()
        s = summary_of(run)
        if "peak_mem" in mem:
            peak, reserved = mem["peak_mem"], mem["peak_mem_with_reserved"]
        else:
            peak = {k: v["peak_mem"] for k, v in mem.items()}
            reserved = {k: v["peak_mem_with_reserved"] for k, v in mem.items()}
        nets = s["nets"]
        return Result({
            "model": self.model_config._data.get("model_name", self.model_config.stem()),
            "model_type": self.model_config._data.get("model_type"),
            "params": cost["param_numel_info"]["all"],
            "system": self.system._data.get("sys_name", self.system.stem()),
            "peak_mem": peak,
            "peak_mem_with_reserved": reserved,
            "duration_time_per_iter": cost["duration_time_per_iter"],
            "TFLOPS": cost["throughput per GPU (TFLOP/s/GPU)"],
            "TGS_per_gpu": cost["throughput_per_accelerator"],
            "mfu": cost["mfu"],
            "parallelism": strings["parallelism"],
            "recompute": strings["recompute_status"],
            "dtype": f"{strings['dtype']},grad_reduce in "
                     f"{'bf16' if self.strategy._data.get('grad_reduce_in_bf16') else 'fp32'}",
            "net": ", ".join(f"{k}={nets[k]}" for k in ("pp_net", "tp_net", "cp_net", "dp_net", "ep_net", "etp_net")),
            "summary": s,
        })

    def simulate(self, save_path, merge_lanes=True, trace_ranks=None, trace_format="chrome", executor=None):
        """Simulates the step with every kernel and collective as its own task (op granularity) and writes into
        `save_path` (created) SimuMax's simulate() files under their names (tracing_logs.json,
        simu_memory_result.json, simu_memory_snapshot.json, simu_memory_viz_snapshot.pickle) and
        compute_result.json, mem_result.json, base_info.json; beside them ours: summary.json, the trace
        (trace.json; `trace_format` 'simumax' writes only tracing_logs.json) and the memory files
        (memory_timeline.json, memory_snapshot.json/.pickle). `merge_lanes` is SimuMax's: True simulates one rank
        per pipeline stage, False every rank. `trace_ranks` (default: the simulated ranks) is `run
        --trace-ranks`. Returns {"files": [paths], "summary": summary.json's dict}."""
        options = dict(self._options, granularity="op", ranks="stages" if merge_lanes else "all")
        if executor is not None:
            options["executor"] = executor
        run = _core.run(self.scenario(), **options)
        os.makedirs(save_path, exist_ok=True)
        folder = os.fspath(save_path)
        _core.remove_earlier_run(folder)
        files = [run.write_summary(folder)]
        files += run.write_outputs(folder, trace=True, ranks=trace_ranks or options["ranks"], format=trace_format,
                                   memory=True, simumax=True)
        # SimuMax's name for the memory_viz pickle (the same PyTorch snapshot format as ours).
        viz = os.path.join(folder, "simu_memory_viz_snapshot.pickle")
        partial = viz + ".partial"
        shutil.copyfile(os.path.join(folder, "memory_snapshot.pickle"), partial)
        os.replace(partial, viz)
        files.append(viz)
        return Result({"files": files, "summary": summary_of(run)})


def _stage_index(key, pp):
    """The pipeline stage of a mem_result key: first_stage 0, middle_stage 1, last_stage pp - 1, pp_stage_N N."""
    if key == "first_stage":
        return 0
    if key == "middle_stage":
        return 1
    if key == "last_stage":
        return pp - 1
    return int(key[len("pp_stage_"):])


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
        _core.remove_earlier_run(os.fspath(out))
        result.files = [r.write_summary(os.fspath(out))]
        result.files += r.write_outputs(os.fspath(out), trace=trace, memory=memory)
    return result
