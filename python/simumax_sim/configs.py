"""SimuMax's three configs (ModelConfig, StrategyConfig, SystemConfig) as the JSON objects SimuMax's files hold.

A config is its JSON object, read with the engine's checks (a file's fields are type-checked when it is read; the
three together are checked by PerfLLM.configure and run_estimate). Fields read and write as attributes, as on
SimuMax's dataclasses: `strategy.pp_size`, `model.padded_vocab_size = True`. A field the object does not hold
has SimuMax's default, which the engine applies: reading it raises AttributeError (except StrategyConfig's
derived dp_size). Errors name the file the config came from, "<model_config dict>" for a dict, and say which
fields were set from Python.
"""

import copy
import json
import math
import os
from collections.abc import Mapping

from simumax_sim import _core

# The engine's limit (engine/common/json_depth.hpp): copying or writing a deeper value would recurse past
# Python's limit, and no config nests beyond a few levels.
_MAX_DEPTH = 100


def _check_depth(value, where):
    """Raises ConfigError when `value` (dicts and lists) nests deeper than the engine reads; iterative."""
    stack = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, Mapping):
            children = v.values()
        elif isinstance(v, (list, tuple)):
            children = v
        else:
            continue
        if depth > _MAX_DEPTH:
            raise _core.ConfigError(f"{where}: nested deeper than {_MAX_DEPTH} levels: no config nests so deep")
        stack.extend((c, depth + 1) for c in children)


class _Config:
    _kind = ""

    def __init__(self, data, source=None):
        object.__setattr__(self, "_data", data)
        object.__setattr__(self, "_source", source)
        object.__setattr__(self, "_changed", [])

    @classmethod
    def read_json_file(cls, path):
        """The file's JSON object as a dict, read with the engine's checks for this kind of config."""
        return json.loads(_core.read_config_json(cls._kind, os.fspath(path)))

    @classmethod
    def init_from_config_file(cls, path):
        """Reads a SimuMax config file; raises ConfigError naming the file and field at fault."""
        return cls(cls.read_json_file(path), os.fspath(path))

    @classmethod
    def init_from_dict(cls, data):
        """A config from a dict of SimuMax's fields (copied); it is checked when PerfLLM.configure reads it."""
        if not isinstance(data, Mapping):
            raise TypeError(f"{cls.__name__}.init_from_dict: expected a dict, got {type(data).__name__}")
        _check_depth(data, f"<{cls._kind}_config dict>")
        return cls(copy.deepcopy(dict(data)))

    @classmethod
    def coerce(cls, value, argument):
        """`value` as this class: an instance, a path (str or os.PathLike) or a dict."""
        if isinstance(value, cls):
            return value
        if isinstance(value, (str, os.PathLike)):
            return cls.init_from_config_file(value)
        if isinstance(value, Mapping):
            return cls.init_from_dict(value)
        raise TypeError(f"{argument}: expected a {cls.__name__}, a path to a JSON file or a dict, "
                        f"got {type(value).__name__}")

    def to_dict(self):
        return copy.deepcopy(self._data)

    def __getattr__(self, name):
        data = object.__getattribute__(self, "_data")
        if name in data:
            return data[name]
        if not name.startswith("_"):
            derived = self._derived(name)
            if derived is not None:
                return derived
        raise AttributeError(f"{type(self).__name__} has no field '{name}' (not given in {self.label()}; "
                             f"SimuMax's default applies in the engine)")

    def __setattr__(self, name, value):
        _check_depth(value, f"{self.label()}: {name}")
        self._data[name] = value
        if name not in self._changed:
            self._changed.append(name)

    def _derived(self, name):
        return None

    def label(self):
        """What errors name as the file: the path, or "<kind_config dict>", with the fields set from Python."""
        where = self._source if self._source is not None else f"<{self._kind}_config dict>"
        if self._changed:
            where += f" (with {', '.join(self._changed)} set in Python)"
        return where

    def stem(self):
        """The file's name without .json (the scenario name is "<model stem>_<strategy stem>", as the CLI's)."""
        if self._source is None:
            return self._kind
        return os.path.splitext(os.path.basename(self._source))[0]

    def json_text(self):
        try:
            return json.dumps(self._data, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise _core.ConfigError(f"{self.label()}: cannot be written as JSON: {e}") from None

    def __repr__(self):
        return f"{type(self).__name__}({self.label()})"


class ModelConfig(_Config):
    _kind = "model"


class StrategyConfig(_Config):
    _kind = "strategy"

    def _derived(self, name):
        if name == "dp_size":
            world = self._data.get("world_size", 1)
            group = math.prod(self._data.get(k, 1) for k in ("tp_size", "cp_size", "pp_size"))
            return world // group if group and world % group == 0 else None
        return None


class SystemConfig(_Config):
    _kind = "system"
