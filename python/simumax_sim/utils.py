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


def _configs(kind):
    # name -> path, the first folder holding a name winning (as _find looks them up).
    found = {}
    for folder in _folders(kind):
        if os.path.isdir(folder):
            for f in sorted(os.listdir(folder)):
                if f.endswith(".json"):
                    found.setdefault(f[:-5], os.path.join(folder, f))
    return dict(sorted(found.items()))


def _find(kind, name):
    folders = _folders(kind)
    for folder in folders:
        path = os.path.join(folder, name if name.endswith(".json") else name + ".json")
        if os.path.isfile(path):
            return path
    names = list(_configs(kind))
    where = ", ".join(folders) if folders else "nowhere (set SIMUMAX_SHARED_DIR)"
    raise FileNotFoundError(f"no {kind} config named '{name}' in {where}; names: {', '.join(names) or 'none'}")


def _release(version):
    if version != "release":
        raise ValueError(f"version '{version}': only 'release' configs are shipped (SimuMax's develop/configs "
                         f"tree is not)")


def get_simu_model_config(name, version="release"):
    """The path of model config `name` (e.g. 'llama3-8b')."""
    _release(version)
    return _find("model", name)


def get_simu_strategy_config(name, version="release"):
    """The path of SimuMax strategy `name` (e.g. 'tp1_pp2_dp4_mbs1'): SimuMax v1.2's strategies are shipped."""
    _release(version)
    return _find("strategy", name)


def get_simu_system_config(name, version="release"):
    """The path of system config `name` (e.g. 'a100_pcie')."""
    _release(version)
    return _find("system", name)


def _show(kind, header, version):
    _release(version)
    rows = _configs(kind)
    width = max([len(header)] + [len(n) for n in rows])
    path_header = f"{header} Config Path"
    print(f"{header:<{width}}  {path_header}")
    print(f"{'-' * width}  {'-' * max([len(path_header)] + [len(p) for p in rows.values()])}")
    for name, path in rows.items():
        print(f"{name:<{width}}  {path}")


def show_simu_models(version="release"):
    """Prints every model config name and its path (SimuMax's table: Model, Model Config Path)."""
    _show("model", "Model", version)


def show_simu_strategy(version="release"):
    """Prints every strategy config name and its path."""
    _show("strategy", "Strategy", version)


def show_simu_system(version="release"):
    """Prints every system config name and its path."""
    _show("system", "System", version)
