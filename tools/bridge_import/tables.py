"""Megatron-Bridge's performance tables (docs/performance-summary*.md) -> one row dict per measured run.

Two layouts: from 26.02 on, a section per model (`#### Model: X`, first column System); 25.11 and 25.09, a
section per machine (`#### System: X`, first column Model, FSDP and GA columns). A cell "a (b)" holds two runs
(the second the table's other precision, e.g. "FP8-CS (FP8-MX)"). Only "Pre-Training Performance" sections are
rows; SFT and LoRA sections are counted and skipped. Reserved models are dropped by name before any of their
cells is split (is_reserved).
"""
import re

RESERVED = re.compile(r"llama[-_ ]?3\.?1[-_ ]?405b|deepseek[-_ ]?v3", re.I)
RELEASE = re.compile(r"^## (\S+) NeMo Container\s*$")
COLUMNS = {  # header text -> field
    "System": "system", "Model": "model", "#-GPUs": "gpus", "Precision": "precision", "GBS": "gbs",
    "MBS": "mbs", "Sequence Length": "seq", "FSDP": "fsdp", "TP": "tp", "PP": "pp", "CP": "cp", "VP": "vp",
    "EP": "ep", "GA": "ga", "Tokens / sec / GPU": "tokens_per_gpu", "Model TFLOP / sec / GPU": "tflops_per_gpu",
}
PAIR = re.compile(r"^(\S+)\s*\((\S+)\)$")
FOOTNOTE = re.compile(r"\[\^[^\]]*\]")


def is_reserved(name):
    return bool(RESERVED.search(name.replace(" ", "")) or RESERVED.search(name))


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def parse(path, rel, counts):
    """REQUIRES: path is a performance-summary markdown file. Returns row dicts; counts gets the dropped ones."""
    rows = []
    release = kind = model = system = None
    header = None
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for number, line in enumerate(lines, 1):
        m = RELEASE.match(line)
        if m:
            release, kind, model, system, header = m.group(1), None, None, None, None
            continue
        if line.startswith("### "):
            kind, model, system, header = line[4:].strip(), None, None, None
            continue
        if line.startswith("#### Model:"):
            model, system, header = line.split(":", 1)[1].strip(), None, None
            continue
        if line.startswith("#### System:"):
            system, model, header = line.split(":", 1)[1].strip(), None, None
            continue
        if not line.startswith("|"):
            header = None
            continue
        if release is None:
            continue
        if model is not None and is_reserved(model):
            if not line.startswith("|-") and header is not None:
                counts["reserved: kept back to judge the model (LLAMA3.1_405B, DeepSeekV3)"] += 1
            header = header or "reserved"
            continue
        row_cells = cells(line)
        if header is None:
            header = row_cells
            continue
        if line.startswith("|-") or header == "reserved":
            continue
        if system is not None and is_reserved(row_cells[0]):
            counts["reserved: kept back to judge the model (LLAMA3.1_405B, DeepSeekV3)"] += 1
            continue
        where = {"release": release, "file": rel, "line": number}
        if kind is None or not kind.startswith("Pre-Training"):
            counts[f"{kind or 'untitled'} section: not a pre-training run"] += 1
            continue
        if model is None and system is None:
            counts["a table under no model or system heading"] += 1
            continue
        rows.extend(split_row(header, row_cells, model, system, where))
    return rows


def split_row(header, row_cells, model, system, where):
    """One dict per run in the row: a cell "a (b)" makes a second run with every paired cell's b."""
    fields = {}
    for name, value in zip(header, row_cells):
        key = COLUMNS.get(name)
        if key is None:
            fields.setdefault("unknown_columns", []).append(name)
            continue
        fields[key] = FOOTNOTE.sub("", value).strip()
    if model is not None:
        fields["model"] = model
    if system is not None:
        fields["system"] = system
    runs = [dict(fields, **where, variant=0)]
    if any(PAIR.match(v) for k, v in fields.items() if isinstance(v, str) and k not in ("model", "system")):
        second = dict(fields, **where, variant=1)
        for key, value in fields.items():
            m = PAIR.match(value) if isinstance(value, str) and key not in ("model", "system") else None
            if m:
                runs[0][key], second[key] = m.group(1), m.group(2)
        runs.append(second)
    return runs
