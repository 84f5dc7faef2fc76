"""SimuMax's module layout (simumax.core.config, simumax.core.perf_llm), so its scripts port by renaming the
package: `from simumax.core.perf_llm import PerfLLM` becomes `from simumax_sim.core.perf_llm import PerfLLM`."""
