#!/usr/bin/env python3
"""Independent count of the NCCL kernels of each trace by the collective the CPU called (not run by CI).

Writes tests/data/compare/nccl_collectives.json, which engine/compare/kineto_collectives_test.cpp asserts the C++
labelling against. No code is shared with the C++ reader, and the method differs: for every NCCL kernel (name
contains "nccl"), the cuda_runtime / cuda_driver event with the same args.correlation is found, then every
cpu_op / user_annotation of the same pid and tid whose [ts, ts + dur] holds that launch is listed (brute force,
no nesting tree); among those whose name starts with "nccl:" or "c10d::", or that carry a "Collective name" arg
naming a collective, the shortest one types the kernel. A kernel with no such op keeps no CPU type ("from_name").
Usage: python3 tests/data/compare/nccl_reference.py ../shared/traces/kineto/*.json.gz > nccl_collectives.json
"""
import collections, gzip, json, os, sys

# What each CPU spelling means, written out by hand (not derived by stripping suffixes as the C++ does).
SPELLINGS = {
    'all_reduce': 'all_reduce', 'allreduce_': 'all_reduce', 'allreduce': 'all_reduce',
    'all_to_all': 'all_to_all', 'alltoall_base_': 'all_to_all', 'alltoall_': 'all_to_all',
    'all_to_allv': 'all_to_all', 'alltoall_base': 'all_to_all',
    '_all_gather_base': 'all_gather', '_allgather_base_': 'all_gather', 'allgather_': 'all_gather',
    'all_gather': 'all_gather', 'allgather': 'all_gather', '_allgather_base': 'all_gather',
    '_reduce_scatter_base': 'reduce_scatter', '_reduce_scatter_base_': 'reduce_scatter',
    'reduce_scatter': 'reduce_scatter', 'reduce_scatter_': 'reduce_scatter',
    'broadcast': 'broadcast', 'broadcast_': 'broadcast',
}


def cpu_type(op):
    name = op['name']
    for prefix in ('nccl:', 'c10d::'):
        if name.startswith(prefix) and name[len(prefix):] in SPELLINGS:
            return SPELLINGS[name[len(prefix):]]
    arg = op.get('args', {}).get('Collective name')
    return SPELLINGS.get(arg) if arg else None


def count(path):
    ev = json.load(gzip.open(path) if path.endswith('.gz') else open(path))['traceEvents']
    launches = {e['args']['correlation']: e for e in ev
                if e.get('ph') == 'X' and e.get('cat') in ('cuda_runtime', 'cuda_driver')
                and 'correlation' in e.get('args', {})}
    ops = collections.defaultdict(list)
    for e in ev:
        if e.get('ph') == 'X' and e.get('cat') in ('cpu_op', 'user_annotation'):
            ops[(e['pid'], e['tid'])].append(e)
    by_type, from_name = collections.Counter(), 0
    for k in ev:
        if k.get('ph') != 'X' or k.get('cat') != 'kernel' or 'nccl' not in k['name'].lower():
            continue
        launch = launches.get(k.get('args', {}).get('correlation'))
        typed = None
        if launch is not None:
            lo, hi = launch['ts'], launch['ts'] + launch['dur']
            holding = [o for o in ops[(launch['pid'], launch['tid'])]
                       if o['ts'] <= lo and hi <= o['ts'] + o['dur'] and cpu_type(o)]
            if holding:
                typed = cpu_type(min(holding, key=lambda o: o['dur']))
        if typed is None:
            typed = SPELLINGS.get(k.get('args', {}).get('Collective name'))
        if typed is None:
            from_name += 1
        else:
            by_type[typed] += 1
    return {'typed_by_cpu': dict(sorted(by_type.items())), 'from_name': from_name}


print(json.dumps({os.path.basename(p): count(p) for p in sorted(sys.argv[1:])}, indent=2))
