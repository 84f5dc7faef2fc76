#!/usr/bin/env python3
"""Independent count of the GEMM calls of a trace for engine/compare/kineto_insight_test.cpp (not run by CI).

GEMM kernels (data/kernel_classes.json, applied by kineto_reference.py's classify) launched inside a ProfilerStep#N
are counted; each one's launch (same args.correlation) is enclosed by CPU ops of its thread, found by brute force;
the shortest enclosing aten::mm / addmm / bmm / baddbmm / linear is its call. Prints the kernels, the distinct calls,
and the calls whose Input Dims give a consistent GEMM shape.
Usage: python3 tests/data/compare/gemm_reference.py ../shared/traces/kineto/train_8gpu_rank3.json.gz
"""
import bisect, collections, gzip, json, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ns = {'__file__': os.path.join(HERE, 'kineto_reference.py')}
exec(open(ns['__file__']).read().split('def analyse')[0], ns)
classify = ns['classify']
GEMM_OPS = {'aten::mm', 'aten::addmm', 'aten::bmm', 'aten::baddbmm', 'aten::linear'}


def shaped(op):
    d = op.get('args', {}).get('Input Dims') or []
    n = op['name']
    try:
        if n in ('aten::mm', 'aten::bmm'):
            x, w = d[0], d[1]
        elif n in ('aten::addmm', 'aten::baddbmm'):
            x, w = d[1], d[2]
        else:
            return len(d) >= 2 and len(d[1]) == 2 and d[0] and d[0][-1] == d[1][1]
        return (len(x) == len(w) == 2 and x[1] == w[0]) or (len(x) == len(w) == 3 and x[0] == w[0] and x[2] == w[1])
    except (IndexError, TypeError):
        return False


ev = json.load(gzip.open(sys.argv[1]))['traceEvents']
steps = sorted([e for e in ev if e.get('ph') == 'X' and str(e.get('name', '')).startswith('ProfilerStep#')
                and e.get('cat') != 'gpu_user_annotation'], key=lambda e: e['ts'])
starts = [s['ts'] for s in steps]
launches = {e['args']['correlation']: e for e in ev if e.get('ph') == 'X' and e.get('cat') in ('cuda_runtime', 'cuda_driver')
            and 'correlation' in e.get('args', {})}
ops = collections.defaultdict(list)
for e in ev:
    if e.get('ph') == 'X' and e.get('cat') in ('cpu_op', 'user_annotation'):
        ops[(e['pid'], e['tid'])].append(e)
kernels, calls = 0, {}
for k in ev:
    if k.get('ph') != 'X' or k.get('cat') not in ('kernel', 'gpu_memcpy', 'gpu_memset'):
        continue
    if classify(k['cat'], k['name'])[0] != 'gemm':
        continue
    r = launches.get(k['args'].get('correlation'))
    if r is None:
        continue
    i = bisect.bisect_right(starts, r['ts']) - 1
    if not (i >= 0 and r['ts'] <= steps[i]['ts'] + steps[i]['dur'] and r['pid'] == steps[i]['pid']):
        continue
    kernels += 1
    g = [o for o in ops[(r['pid'], r['tid'])] if o['name'] in GEMM_OPS and o['ts'] <= r['ts']
         and r['ts'] + r['dur'] <= o['ts'] + o['dur']]
    if g:
        o = min(g, key=lambda o: o['dur'])
        calls[id(o)] = o
print('gemm kernels', kernels, 'calls', len(calls), 'shaped calls', sum(shaped(o) for o in calls.values()))
