"""What the Python API returns: plain dicts (Result) of summary.json's fields and SimuMax's keys."""

import json


class Result(dict):
    """A plain dict; `.data` is the dict itself, as SimuMax's Result objects keep theirs in `.data`."""

    @property
    def data(self):
        return self


def summary_of(run):
    """summary.json's fields of an engine run (_core.Run), as a Result."""
    return Result(json.loads(run.summary_json()))


def ranks_of(run):
    """ranks.json's rows of an engine run (_core.Run): one dict per simulated rank (job rank, stage, end_ms,
    late_ms, compute_ms, comm_ms, exposed_comm_ms, <kind>_comm_ms / <kind>_exposed_ms, peak memory), in graph-rank
    order: every GPU with ranks='all', one rank per pipeline stage with ranks='stages'."""
    return json.loads(run.ranks_json())["ranks"]

