"""A bad input raises a Python exception with the CLI's "file: /json/pointer: message" text, never a crash."""

import json
import math
import os
import signal
import time

import pytest

import simumax_sim
from conftest import MODEL_8B, STRATEGY_TP1_PP2, SYSTEM_A100, cli
from simumax_sim import ConfigError, ModelConfig, PerfLLM, UsageError


def write(tmp_path, name, obj_or_text):
    path = tmp_path / name
    path.write_text(obj_or_text if isinstance(obj_or_text, str) else json.dumps(obj_or_text))
    return str(path)


def model_with(**changes):
    with open(MODEL_8B) as f:
        model = json.load(f)
    model.update(changes)
    return model


def cli_error(model, strategy, system, out):
    rc, _, stderr = cli("run", "--model", model, "--strategy", strategy, "--system", system, "-q", "-o", out)
    assert rc == 2, stderr
    first = stderr.splitlines()[0]
    assert first.startswith("error: ")
    return first[len("error: "):]


# (file name, content, whose fault: the model file itself or, for a cross-field rule, the strategy)
BAD_MODELS = [
    ("wrong_type.json", model_with(hidden_size="4096"), "model"),
    ("unknown_key.json", model_with(hiden_size_typo=4096), "model"),
    ("layers.json", model_with(layer_num=31), "strategy"),  # pp 2 does not split 31 layers: checked by configure
    ("syntax.json", '{"hidden_size": 4096,,}', "model"),
    ("twice.json", '{"hidden_size": 4096, "hidden_size": 4096}', "model"),
]


@pytest.mark.parametrize("name,content,fault", BAD_MODELS, ids=[b[0] for b in BAD_MODELS])
def test_bad_model_file_raises_the_cli_message(tmp_path, name, content, fault):
    path = write(tmp_path, name, content)
    expected = cli_error(path, STRATEGY_TP1_PP2, SYSTEM_A100, str(tmp_path / "out"))
    with pytest.raises(ConfigError) as e:
        PerfLLM().configure(strategy_config=STRATEGY_TP1_PP2, model_config=path, system_config=SYSTEM_A100)
    assert str(e.value) == expected
    assert e.value.file == (path if fault == "model" else STRATEGY_TP1_PP2)
    assert isinstance(e.value, ValueError)


def test_bad_dict_names_the_dict_and_the_field():
    with pytest.raises(ConfigError) as e:
        PerfLLM().configure(strategy_config=STRATEGY_TP1_PP2, model_config=model_with(hidden_size=-1),
                            system_config=SYSTEM_A100)
    assert str(e.value).startswith("<model_config dict>: /hidden_size: ")
    assert e.value.pointer == "/hidden_size"


def test_a_field_set_in_python_is_named():
    perf = PerfLLM().configure(strategy_config=STRATEGY_TP1_PP2, model_config=MODEL_8B, system_config=SYSTEM_A100)
    perf.strategy.tp_size = 3
    with pytest.raises(ConfigError, match=r"tp1_pp2_dp4_mbs1.json \(with tp_size set in Python\): /world_size: 8 is not a multiple"):
        perf.run_estimate()


def test_values_json_cannot_hold_are_config_errors():
    model = ModelConfig.init_from_dict(model_with(hidden_size=math.nan))
    with pytest.raises(ConfigError, match="<model_config dict>: cannot be written as JSON"):
        PerfLLM().configure(strategy_config=STRATEGY_TP1_PP2, model_config=model, system_config=SYSTEM_A100)


def nested(depth):
    value = []
    for _ in range(depth):
        value = [value]
    return value


def test_deeply_nested_values_are_config_errors_not_crashes(tmp_path):
    # 200,000 levels overflowed the stack of a recursive copy (issue 32); the limit is the engine's 100.
    with pytest.raises(ConfigError, match=r"<model_config dict>: nested deeper than 100 levels"):
        ModelConfig.init_from_dict(model_with(extra=nested(200000)))
    model = ModelConfig.init_from_dict(model_with(extra=nested(50)))
    with pytest.raises(ConfigError, match=r"<model_config dict>: extra: nested deeper than 100 levels"):
        model.extra = nested(200000)
    deep = "[" * 200000 + "]" * 200000
    with open(MODEL_8B) as f:
        text = f.read().replace("{", '{"extra": ' + deep + ",", 1)
    path = write(tmp_path, "deep.json", text)
    with pytest.raises(ConfigError, match=r"deep.json: nested deeper than 100 levels \(line 1, column "):
        ModelConfig.init_from_config_file(path)


def test_missing_file_and_wrong_types():
    with pytest.raises(ConfigError, match="no_such.json"):
        ModelConfig.init_from_config_file("no_such.json")
    with pytest.raises(TypeError, match="model_config: expected a ModelConfig, a path to a JSON file or a dict"):
        PerfLLM().configure(strategy_config=STRATEGY_TP1_PP2, model_config=42, system_config=SYSTEM_A100)


def test_usage_errors():
    with pytest.raises(UsageError, match="run_estimate"):
        PerfLLM().configure(strategy_config=STRATEGY_TP1_PP2, model_config=MODEL_8B,
                            system_config=SYSTEM_A100).analysis_mem()
    with pytest.raises(UsageError, match="configure"):
        PerfLLM().run_estimate()
    with pytest.raises(UsageError, match="executor='warp': expected one of fast, sim"):
        PerfLLM(executor="warp").configure(strategy_config=STRATEGY_TP1_PP2, model_config=MODEL_8B,
                                           system_config=SYSTEM_A100).run_estimate()
    with pytest.raises(UsageError, match="unknown list tpp"):
        simumax_sim.search(MODEL_8B, SYSTEM_A100, 8, 32, seq_len=4096, tpp=[1])


def test_search_refuses_what_the_cli_refuses():
    # The CLI caps --world-size at 2^24 and refuses a NaN margin; serve and Python share the check (issue 32).
    with pytest.raises(UsageError, match=r"--world-size: expected 1 to 16777216 \(2\^24\) GPUs, got 1099511627776"):
        simumax_sim.search(MODEL_8B, SYSTEM_A100, 1 << 40, 32, seq_len=4096)
    with pytest.raises(TypeError, match="world_size: expected an integer, got bool"):
        simumax_sim.search(MODEL_8B, SYSTEM_A100, True, 32, seq_len=4096)
    with pytest.raises(UsageError, match="--memory-margin-gib: expected a finite number, got nan"):
        simumax_sim.search(MODEL_8B, SYSTEM_A100, 8, 32, seq_len=4096, memory_margin_gib=math.nan)


def test_a_second_simgrid_run_is_an_exception_not_a_crash():
    perf = PerfLLM(executor="sim").configure(strategy_config=STRATEGY_TP1_PP2, model_config=MODEL_8B,
                                             system_config=SYSTEM_A100)
    perf.run_estimate()
    first = perf.summary()["step_time_ms"]
    with pytest.raises(simumax_sim.InternalError):
        perf.run_estimate()
    with pytest.raises(KeyboardInterrupt):  # SimGrid's own SIGINT handler would end the interpreter
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)
    fast = PerfLLM().configure(strategy_config=STRATEGY_TP1_PP2, model_config=MODEL_8B, system_config=SYSTEM_A100)
    fast.run_estimate()
    assert fast.summary()["step_time_ms"] == pytest.approx(first, rel=1e-9)
