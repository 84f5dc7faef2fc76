"""SimuMax's simumax.utils config finders: a config's path from its name.

Looked up in the shipped data (share/simumax-sim/models, strategies and platforms; data_dir()), then in
SimuMax's own configs under $SIMUMAX_SHARED_DIR/simumax-configs (models, strategy, system) when it is set.
"""

import os

from simumax_sim import _core

_FOLDERS = {
    "model": ("models", "models"),
    "strategy": ("strategies", "strategy"),
    "system": ("platforms", "system"),
}


def _folders(kind):
    shipped, simumax = _FOLDERS[kind]
    out = []
    if shipped is not None:
        out.append(os.path.join(_core.data_dir(), shipped))
    shared = os.environ.get("SIMUMAX_SHARED_DIR")
    if shared:
        out.append(os.path.join(shared, "simumax-configs", simumax))
    return out


def _find(kind, name):
    folders = _folders(kind)
    for folder in folders:
        path = os.path.join(folder, name if name.endswith(".json") else name + ".json")
        if os.path.isfile(path):
            return path
    names = sorted({f[:-5] for d in folders if os.path.isdir(d) for f in os.listdir(d) if f.endswith(".json")})
    where = ", ".join(folders) if folders else "nowhere (set SIMUMAX_SHARED_DIR)"
    raise FileNotFoundError(f"no {kind} config named '{name}' in {where}; names: {', '.join(names) or 'none'}")


def get_simu_model_config(name):
    """The path of model config `name` (e.g. 'llama3-8b')."""
    return _find("model", name)


def get_simu_strategy_config(name):
    """The path of SimuMax strategy `name` (e.g. 'tp1_pp2_dp4_mbs1'): SimuMax v1.2's strategies are shipped."""
    return _find("strategy", name)


def get_simu_system_config(name):
    """The path of system config `name` (e.g. 'a100_pcie')."""
    return _find("system", name)
