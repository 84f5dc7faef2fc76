"""SimuMax's simumax.core.config: the three config classes."""

from simumax_sim.configs import ModelConfig, StrategyConfig, SystemConfig

__all__ = ["ModelConfig", "StrategyConfig", "SystemConfig"]
