#!/usr/bin/env python3
"""Independent reference for engine/compare/kineto_trace_test.cpp (not run by CI; python3 only, no numpy).

Recomputes `simumax-sim compare`'s per-step breakdown of a PyTorch profiler trace with no code shared with the
C++ reader: data/kernel_classes.json applied with Python's re, GPU events attributed to ProfilerStep#N through
the cuda_runtime event with the same args.correlation, the GPU timeline cut at each step's first event on the
stream with the most compute time, interval unions by sort-and-merge.
Usage: python3 tests/data/compare/kineto_reference.py ../shared/traces/kineto/*.json.gz
"""
import os
import json, sys, re, bisect, collections, gzip
TABLE=json.load(open(os.path.join(os.path.dirname(__file__), '..', '..', '..', 'data', 'kernel_classes.json')))
KIND={c['name']:c['kind'] for c in TABLE['classes']}
RULES=[r for r in TABLE['rules'] if any(not k.startswith('_') for k in r)]
def classify(cat,name):
    low=name.lower()
    for r in RULES:
        if 'cat' in r and r['cat']!=cat: continue
        if 'contains' in r and not any(s.lower() in low for s in r['contains']): continue
        if 'regex' in r and not re.search(r['regex'],name,re.I): continue
        return r['class'], r.get('subclass', r['class'])
    return TABLE['default_class'], TABLE['default_class']
GPU={'kernel','gpu_memcpy','gpu_memset'}
RT={'cuda_runtime','cuda_driver'}
def union(iv):
    iv=sorted(x for x in iv if x[1]>x[0]); out=[]
    for a,b in iv:
        if out and a<=out[-1][1]: out[-1][1]=max(out[-1][1],b)
        else: out.append([a,b])
    return out
def length(u): return sum(b-a for a,b in u)
def minus(u,v):
    res=0
    for a,b in u:
        cur=a
        for x,y in v:
            if y<=cur: continue
            if x>=b: break
            if x>cur: res+=x-cur
            cur=max(cur,y)
            if cur>=b: break
        if cur<b: res+=b-cur
    return res
def analyse(f):
    d=json.load(gzip.open(f) if f.endswith('.gz') else open(f))
    ev=d['traceEvents']
    steps=sorted([e for e in ev if e.get('ph')=='X' and str(e.get('name','')).startswith('ProfilerStep#') and e.get('cat')!='gpu_user_annotation'], key=lambda e:e['ts'])
    starts=[s['ts'] for s in steps]
    corr2step={}
    for e in ev:
        if e.get('ph')=='X' and e.get('cat') in RT:
            i=bisect.bisect_right(starts,e['ts'])-1
            if i>=0 and e['ts']<=steps[i]['ts']+steps[i]['dur'] and e['pid']==steps[i]['pid']:
                c=e.get('args',{}).get('correlation')
                if c is not None: corr2step[c]=i
    gpu=[]
    for e in ev:
        if e.get('ph')=='X' and e.get('cat') in GPU:
            cls,sub=classify(e['cat'],e['name'])
            gpu.append(dict(s=e['ts'],e=e['ts']+e['dur'],stream=e['tid'],cls=cls,sub=sub,kind=KIND[cls],
                            step=corr2step.get(e.get('args',{}).get('correlation'),-1)))
    busy=collections.Counter()
    for g in gpu:
        if g['kind']=='compute' and g['step']>=0: busy[g['stream']]+=g['e']-g['s']
    main=busy.most_common(1)[0][0]
    wstart=[]
    for i in range(len(steps)):
        m=[g['s'] for g in gpu if g['step']==i and g['stream']==main] or [g['s'] for g in gpu if g['step']==i]
        wstart.append(min(m))
    wend=wstart[1:]+[max(g['e'] for g in gpu if g['step']==len(steps)-1)]
    out=[]
    for i,s in enumerate(steps):
        a,b=wstart[i],max(wend[i],wstart[i])
        clip=lambda gs:[(max(g['s'],a),min(g['e'],b)) for g in gs if g['e']>a and g['s']<b]
        comp=union(clip([g for g in gpu if g['kind']=='compute']))
        comm=union(clip([g for g in gpu if g['kind']=='comm']))
        mem=union(clip([g for g in gpu if g['kind']=='memory']))
        allu=union(clip(gpu))
        byc={c:length(union(clip([g for g in gpu if g['cls']==c])))/1e3 for c in KIND}
        commt={t:length(union(clip([g for g in gpu if g['kind']=='comm' and g['sub']==t])))/1e3 for t in sorted({g['sub'] for g in gpu if g['kind']=='comm'})}
        mine=[g for g in gpu if g['step']==i]
        out.append(dict(label=s['name'],cpu_ms=s['dur']/1e3,total_ms=(b-a)/1e3,compute_ms=length(comp)/1e3,comm_ms=length(comm)/1e3,
            exposed_ms=minus(comm,comp)/1e3,memory_ms=length(mem)/1e3,idle_ms=(b-a-length(allu))/1e3,class_ms=byc,comm_by_type=commt,
            kernels=len(mine),comm_counts=dict(collections.Counter(g['sub'] for g in mine if g['kind']=='comm')),start=a,end=b))
    un=sum(1 for g in gpu if g['step']<0)
    return d.get('distributedInfo',{}),main,un,len(gpu),out
for f in sys.argv[1:]:
    di,main,un,n,out=analyse(f)
    print('==',f.split('/')[-1],'rank',di.get('rank'),'world',di.get('world_size'),'steps',len(out),'gpu events',n,'unattributed',un,'main stream',main)
    for o in out:
        print(f"{o['label']:18s} cpu {o['cpu_ms']:8.3f} total {o['total_ms']:9.3f} compute {o['compute_ms']:8.3f} comm {o['comm_ms']:8.3f} exposed {o['exposed_ms']:8.3f} mem {o['memory_ms']:6.3f} idle {o['idle_ms']:8.3f} kernels {o['kernels']} {o['comm_counts']}")
        print('      classes', {k:round(v,3) for k,v in o['class_ms'].items()}, 'comm by type', {k:round(v,3) for k,v in o['comm_by_type'].items()})
