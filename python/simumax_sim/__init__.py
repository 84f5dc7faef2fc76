"""simumax-sim from Python: the engine in this process, in SimuMax's shape.

    from simumax_sim import PerfLLM
    perf = PerfLLM()
    perf.configure(strategy_config="tp1_pp2.json", model_config="llama3-8b.json", system_config="a100_pcie.json")
    perf.run_estimate()
    perf.analysis()            # prints the table `simumax-sim run` prints; returns a dict

Also `run(scenario)` (one step, a dict of summary.json's fields) and `search(...)` (the strategy search of
`simumax-sim search`). A bad config raises ConfigError (a ValueError) whose text is the CLI's
"file: /json/pointer: message"; UsageError (a ValueError) is a bad argument; InternalError is a bug of ours.
"""

from simumax_sim._core import ConfigError, InternalError, UsageError, __version__, data_dir
from simumax_sim.configs import ModelConfig, StrategyConfig, SystemConfig
from simumax_sim.perf_llm import PerfLLM, Result, run
from simumax_sim.searches import search
from simumax_sim.utils import (get_simu_model_config, get_simu_strategy_config, get_simu_system_config,
                               show_simu_models, show_simu_strategy, show_simu_system)

__all__ = [
    "ConfigError", "InternalError", "UsageError", "__version__", "data_dir",
    "ModelConfig", "StrategyConfig", "SystemConfig",
    "PerfLLM", "Result", "run", "search",
    "get_simu_model_config", "get_simu_strategy_config", "get_simu_system_config",
    "show_simu_models", "show_simu_strategy", "show_simu_system",
]
