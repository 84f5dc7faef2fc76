#!/usr/bin/env python3
"""Writes a synthetic Kineto trace of N events (default 10 M) for the compare size check in docs/compare.md
(not run by CI): per kernel a cpu_op with Input Dims (aten::mm), its cudaLaunchKernel and the kernel; every 64th
kernel an NCCL all-reduce launched inside nccl:all_reduce; ProfilerStep#N every 100,000 kernels.
Usage: python3 tests/data/compare/make_big_trace.py OUT.json [EVENTS]
"""
import sys

out, events = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 10_000_000
kernels = events // 3
per_step = 100_000
with open(out, 'w') as f:
    f.write('{"distributedInfo": {"rank": 0, "world_size": 8}, "traceEvents": [\n')
    steps = (kernels + per_step - 1) // per_step
    for s in range(steps):
        f.write('{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d", "pid": 1, "tid": 1, "ts": %d, '
                '"dur": %d},\n' % (s, s * per_step * 10, per_step * 10))
    for i in range(kernels):
        t = i * 10
        nccl = i % 64 == 63
        op = 'nccl:all_reduce' if nccl else 'aten::mm'
        name = 'ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t' if nccl else 'ampere_bf16_s16816gemm_bf16_128x64_ldg8_tn'
        f.write('{"ph": "X", "cat": "cpu_op", "name": "%s", "pid": 1, "tid": 1, "ts": %d, "dur": 6, '
                '"args": {"Input Dims": [[%d, 1024], [1024, 512]], "Input type": ["c10::BFloat16", "c10::BFloat16"]}},\n'
                % (op, t + 1, 64 + i % 8 * 64))
        f.write('{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": %d, '
                '"dur": 4, "args": {"correlation": %d}},\n' % (t + 2, i))
        f.write('{"ph": "X", "cat": "kernel", "name": "%s", "pid": 0, "tid": %d, "ts": %d, "dur": 8, '
                '"args": {"stream": %d, "correlation": %d, "device": 0}}%s\n'
                % (name, 9 if nccl else 7, t + 5, 9 if nccl else 7, i, '' if i == kernels - 1 else ','))
    f.write(']}\n')
