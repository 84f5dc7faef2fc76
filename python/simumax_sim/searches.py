"""The strategy search of `simumax-sim search` from Python, and SimuMax's search helpers on PerfLLM.

Every candidate is evaluated by the engine in this process (the fast executor, on every core unless `threads`
says otherwise), as the CLI does; candidate records are the flat dicts of search.json (time in ms, memory in
GiB, `fits`, `headroom_gib`, `rank`).
"""

import json
import math
import numbers
import os
from collections.abc import Mapping

from simumax_sim import _core
from simumax_sim.configs import ModelConfig, StrategyConfig, SystemConfig
from simumax_sim.results import Result, summary_of

_LISTS = ("tp", "cp", "pp", "ep", "etp", "vpp", "mbs", "recompute", "zero", "sp")


def _list_text(name, value):
    # The CLI's syntax: "1,2,4", "none,selective,full:*", "on,off"; a list or tuple is joined.
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, int):
        return str(value)
    try:
        items = list(value)
    except TypeError:
        raise TypeError(f"{name}: expected a list or a comma-separated string, got {type(value).__name__}") from None
    return ",".join(("on" if v else "off") if isinstance(v, bool) else str(v) for v in items)


def _search_run(base, world_size, global_batch_size, mode, lists, uneven_pp, objective, memory_margin_gib,
                threads, max_candidates):
    for name, value in (("world_size", world_size), ("global_batch_size", global_batch_size)):
        # True is an int to Python (and to the binding): a count must be given as a number.
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"{name}: expected an integer, got {type(value).__name__}")
    texts = {k: _list_text(k, v) for k, v in lists.items() if v is not None}
    return _core.search(base, world_size, global_batch_size, mode, texts, uneven_pp, objective,
                        float(memory_margin_gib), threads, max_candidates)


def _result(sr, title, top):
    records = sr.records()
    return Result({
        "title": title,
        "table": sr.table(title, top),
        "candidates": sr.candidates,
        "evaluated": sr.evaluated,
        "failed": sr.failed,
        "too_big": sr.too_big,
        "skip_reasons": dict(sr.skip_reasons),
        "eval_seconds": sr.eval_seconds,
        "threads": sr.threads,
        "ranking": [records[i] for i in sr.ranking],
        "best": records[sr.ranking[0]] if sr.ranking else None,
        "records": records,
    })


def search(model, system, world_size, global_batch_size, seq_len=None, strategy=None, mode="grid",
           objective="step-time", memory_margin_gib=6, uneven_pp=True, fidelity=None, threads=0, top=10,
           max_candidates=2000000, out=None, **lists):
    """`simumax-sim search`: the configs as paths, dicts or config objects; `mode` grid, micro-batch or
    recompute; the lists (tp, cp, pp, ep, etp, vpp, mbs, recompute, zero, sp) as Python lists or the CLI's
    comma strings, unset ones taking the CLI's defaults. Returns a Result with the counts, 'table' (what the
    CLI prints), 'ranking' (records that fit, best first), 'best' and 'records' (every candidate); with `out`,
    writes search.csv and search.json there."""
    unknown = sorted(set(lists) - set(_LISTS))
    if unknown:
        raise _core.UsageError(f"search: unknown list {', '.join(unknown)}; lists: {', '.join(_LISTS)}")
    m = ModelConfig.coerce(model, "model")
    sy = SystemConfig.coerce(system, "system")
    st = StrategyConfig.coerce(strategy, "strategy") if strategy is not None else None
    base = _core.search_base(m.json_text(), m.label(), st.json_text() if st else None, st.label() if st else "",
                             sy.json_text(), sy.label(), int(seq_len or 0), fidelity or "")
    sr = _search_run(base, world_size, global_batch_size, mode, lists, uneven_pp, objective, memory_margin_gib,
                     threads, max_candidates)
    title = (f"search ({mode}): {m.stem()} on {world_size} GPUs of {sy.stem()}, global batch {global_batch_size}, "
             f"objective {objective}")
    if out is not None:
        os.makedirs(out, exist_ok=True)
        sr.write_files(os.fspath(out), title)
    return _result(sr, title, top)


_RECOMPUTE = {"no_recompute": "none", "full_block": "full:*", "selective_recompute": "selective"}


class SearchHelpers:
    """SimuMax's search helpers, for PerfLLM (which supplies scenario(), model_config, strategy, system)."""

    def _search_base(self):
        self.scenario()  # the configs are checked as a whole first, as SimuMax's configure does
        return _core.search_base(self.model_config.json_text(), self.model_config.label(),
                                 self.strategy.json_text(), self.strategy.label(),
                                 self.system.json_text(), self.system.label(), 0, self._options["fidelity"])

    def _candidate_run(self, sr, index):
        return _core.run(sr.scenario(index), **self._options)

    def get_pp_stage_peak_mem(self, mem_result, peak_mem_key, toG=False):
        """SimuMax's helper: {stage: peak} of an analysis_mem() result (peak_mem_key 'peak_mem' or
        'peak_mem_with_reserved'), parsed from its strings as SimuMax does (so 4 significant decimals), in bytes
        or GiB (toG); pp 1: {'first_stage': peak}."""
        if peak_mem_key not in ("peak_mem_with_reserved", "peak_mem"):
            raise _core.UsageError(f"peak_mem_key '{peak_mem_key}': expected peak_mem_with_reserved or peak_mem")
        scale = 1.0 / (1 << 30) if toG else 1.0
        if peak_mem_key in mem_result:
            return {"first_stage": _size_bytes(mem_result[peak_mem_key]) * scale}
        return {k: _size_bytes(v[peak_mem_key]) * scale for k, v in mem_result.items()
                if isinstance(v, Mapping) and peak_mem_key in v}

    def _peak_alloc_bytes(self, **strategy_changes):
        # One run of the configured job with some strategy fields replaced; the configs themselves are untouched.
        strategy = dict(self.strategy.to_dict(), **strategy_changes)
        changed = ", ".join(sorted(strategy_changes))
        scenario = _core.scenario_from_texts(
            self.model_config.json_text(), self.model_config.label(),
            json.dumps(strategy, allow_nan=False), f"{self.strategy.label()} (search: {changed} replaced)",
            self.system.json_text(), self.system.label(), "search", True)
        return summary_of(_core.run(scenario, **self._options))["peak_alloc_bytes_max"]

    def search_max_micro_batch_size(self, micro_batch_num=None):
        """SimuMax's fixed-count micro-batch search: the largest micro-batch size in [1, 2^16) whose peak
        allocated memory (no reserve, no margin) is within mem_gbs, with `micro_batch_num` micro-batches
        (default pp x 16), by binary search. Returns (size, its peak allocated bytes), (0, None) when size 1
        does not fit. The configured strategy is left as it was."""
        self.scenario()
        mbc = micro_batch_num or self.strategy._data.get("pp_size", 1) * 16
        limit = self.system._data["accelerator"]["mem_gbs"] * float(1 << 30)
        lo, hi, best = 1, (1 << 16) - 1, (0, None)
        while lo <= hi:
            mid = (lo + hi) // 2
            peak = self._peak_alloc_bytes(micro_batch_size=mid, micro_batch_num=mbc)
            if peak > limit:
                hi = mid - 1
            else:
                best, lo = (mid, peak), mid + 1
        return best

    def search_max_micro_batch_size_fixed_gbs(self, pp_size, dp_size, global_batch_size, memory_utils=1.0,
                                              gmi_error=6, use_reserved_memory=True, save_all=True, verbose=True):
        """SimuMax's fixed-global-batch micro-batch search on the configured layout with `pp_size` stages and
        `dp_size` replicas: the micro-batch sizes that fit (peak reserved + gmi_error GiB within
        memory_utils x mem_gbs), largest first. Returns SimuMax's four lists: sizes, micro-batch counts, peak
        reserved GiB by stage ({'first_stage': ..., 'last_stage': ...}, get_pp_stage_peak_mem) and analysis_cost()
        Results (duration_time_per_iter '5.5547 s', ...); only the largest unless save_all."""
        del verbose
        if not use_reserved_memory:
            raise _core.UsageError("use_reserved_memory=False: simumax-sim fits a candidate by its peak reserved "
                                   "memory only")
        if not 0 < memory_utils <= 1:
            raise _core.UsageError(f"memory_utils={memory_utils}: expected a fraction in (0, 1]")
        base = self._search_base()
        tp, cp = (self.strategy._data.get(k, 1) for k in ("tp_size", "cp_size"))
        margin = gmi_error + self.system._data["accelerator"]["mem_gbs"] * (1 - memory_utils)
        sr = _search_run(base, tp * cp * pp_size * dp_size, global_batch_size, "micro-batch", {"pp": [pp_size]},
                         True, "step-time", margin, 0, 2000000)
        records = sr.records()
        sizes, counts, peaks, costs = [], [], [], []
        for i in sr.ranking[: None if save_all else 1]:
            run = self._candidate_run(sr, i)
            sizes.append(records[i]["mbs"])
            counts.append(records[i]["mbc"])
            peaks.append(self.get_pp_stage_peak_mem(self._analysis_mem(run), "peak_mem_with_reserved", toG=True))
            costs.append(self._analysis_cost(run))
        return sizes, counts, peaks, costs

    def search_best_parallel_strategy(self, world_size, gmi_error, micro_batch_size, global_batch_size,
                                      all_search_result, tp_search_list=None, ep_search_list=None,
                                      pp_search_list=None, use_etp=False,
                                      recompute_search_type=("no_recompute", "full_block", "selective_recompute"),
                                      use_reserved_memory=True, dump_path=None, verbose=True):
        """SimuMax's parallel search: tp x ep x pp (dense: ep 1; MoE: tp 1; etp = tp with use_etp) with the
        given recompute types, the highest MFU that fits (peak reserved + gmi_error GiB within mem_gbs).
        Appends each fitting record's fields to the lists of `all_search_result` (a dict of lists) and returns
        the best record (empty dict if none fits); with dump_path, writes search.csv / search.json there."""
        del verbose
        if not use_reserved_memory:
            raise _core.UsageError("use_reserved_memory=False: simumax-sim fits a candidate by its peak reserved "
                                   "memory only")
        if not isinstance(all_search_result, Mapping):
            raise TypeError("all_search_result: expected a dict (of lists)")
        unknown = [t for t in recompute_search_type if t not in _RECOMPUTE]
        if unknown:
            raise _core.UsageError(f"recompute_search_type {unknown}: supported: {', '.join(_RECOMPUTE)}")
        recompute = ",".join(_RECOMPUTE[t] for t in recompute_search_type)
        moe = self.model_config._data.get("expert_num", 1) > 1
        layers = self.model_config._data.get("layer_num", 1)
        tps = [1] if moe else list(tp_search_list or [1, 2, 4, 8])
        eps = list(ep_search_list or [1, 2, 4, 8]) if moe else [1]
        pps = list(pp_search_list or range(1, layers + 1))
        base = self._search_base()
        best, best_mfu = {}, -math.inf
        for tp in tps:  # one search per tp, so that etp can follow it
            lists = {"tp": [tp], "ep": eps, "pp": pps, "etp": [tp if use_etp else 1], "mbs": [micro_batch_size],
                     "recompute": recompute}
            sr = _search_run(base, world_size, global_batch_size, "grid", lists, True, "mfu", gmi_error, 0, 2000000)
            records = sr.records()
            if dump_path is not None:
                folder = os.path.join(os.fspath(dump_path), f"tp{tp}")
                os.makedirs(folder, exist_ok=True)
                sr.write_files(folder, f"parallel search, tp {tp}")
            for i in sr.ranking:
                record = dict(records[i], **self._simumax_record(self._candidate_run(sr, i)))
                for key, value in record.items():
                    all_search_result.setdefault(key, []).append(value)
                if record["mfu"] > best_mfu:
                    best, best_mfu = record, record["mfu"]
        return Result(best)

    def _simumax_record(self, run):
        # PerfLLM.dump_paralism_and_recompute_perf's record of a candidate run.
        cost, strings = self._simumax_json("compute_result", run), run.simumax_strings()
        summary = self._simumax_summary(run, cost, strings)
        return {
            "model_name": summary["model"],
            "param_num": summary["params"],
            "system": summary["system"],
            "parallelism": f"{strings['dtype']}.dense{self.model_config._data.get('dense_layers', 0)}."
                           f"{summary['parallelism']}",
            "recompute_status": summary["recompute"],
            "mfu": summary["mfu"],
            "TFLOPS": summary["TFLOPS"],
            "TGS_per_gpu": summary["TGS_per_gpu"],
            "iter_time": summary["duration_time_per_iter"],
            "straggle_ratio": cost["straggle_ratio"],
            "activations_ratio": cost["param_numel_info"]["activations_ratio"],
            "peak_mem": summary["peak_mem"],
            "peak_mem_with_reserved": summary["peak_mem_with_reserved"],
            # dump_paralism_and_recompute_bw_perf: str() of the run's net_info.json (SimuMax's also keeps the
            # entries of the loop's earlier candidates, whose record it clears only between loops; ours is the
            # candidate's own).
            "comm_bw_info": str(json.loads(run.simumax_json("net_info"))),
        }


_UNITS = {"B": 0, "KB": 1, "MB": 2, "GB": 3, "TB": 4}


def _size_bytes(text):
    """Bytes of SimuMax's size string ("54.1334 GB", base 1024)."""
    value, unit = str(text).split(" ")
    if unit not in _UNITS:
        raise ValueError(f"size '{text}': unknown unit '{unit}'")
    return float(value) * 1024.0 ** _UNITS[unit]
