"""SimuMax's simumax.core.perf_llm: the PerfLLM class."""

from simumax_sim.perf_llm import PerfLLM

__all__ = ["PerfLLM"]
