#!/usr/bin/env python3
"""Writes the small Kineto traces the calibrate --trace tests read (not run by CI; the outputs are committed).

calibrate_attention_nccl.json: one profiler step of a PyTorch 2.x run with
  - 3 flash-attention forward calls (aten::_scaled_dot_product_flash_attention > aten::_flash_attention_forward,
    q [2, 4096, 32, 128], k/v 8 heads) of 1990 / 2000 / 2010 us, and 3 backward calls of two kernels each
    (2400 + 100 us, twice; 2600 + 100 us once);
  - all-reduces of 1, 16 and 256 MiB (bf16, group 4) whose kernels carry In/Out msg nelems, Group size and
    dtype, timed 20 us + 1.5 x bytes / 150 GB/s (an affine machine: every size is reproducible);
  - all-gathers of 8 and 64 MiB gathered (group 4) sized only by their record_param_comms CPU op.
calibrate_no_evidence.json: a step with one GEMM kernel and no Input Dims, and no NCCL kernel.
calibrate_host_launches.json: a step of 120 elementwise kernels whose cudaLaunchKernel calls take 7, 8 and 9 us in
  turn (median 8 us: the host's launch time), nothing else to learn.
calibrate_unsized_nccl.json: a step whose NCCL kernel has an nccl:all_reduce annotation without Input Dims and no
  msg nelems (and the trace no distributedInfo): a collective without a size.
Usage: python3 tests/data/compare/make_calibrate_traces.py tests/data/compare
"""
import json, os, sys

PID, TID, STREAM, COMM_STREAM = 100, 100, 7, 20


class Trace:
    def __init__(self):
        self.events, self.t, self.corr = [], 1000.0, 1

    def op(self, name, dur, args=None, cat='cpu_op'):
        e = {'ph': 'X', 'cat': cat, 'name': name, 'pid': PID, 'tid': TID, 'ts': self.t, 'dur': dur,
             'args': args or {}}
        self.events.append(e)
        return e

    def launch(self, kernel, us, stream=STREAM, kargs=None, launch_us=5):
        """A cudaLaunchKernel of `launch_us` at the current time and its kernel right after it."""
        c = self.corr
        self.corr += 1
        self.events.append({'ph': 'X', 'cat': 'cuda_runtime', 'name': 'cudaLaunchKernel', 'pid': PID, 'tid': TID,
                            'ts': self.t, 'dur': launch_us, 'args': {'correlation': c}})
        args = {'correlation': c, 'stream': stream, 'device': 0}
        args.update(kargs or {})
        self.events.append({'ph': 'X', 'cat': 'kernel', 'name': kernel, 'pid': 0, 'tid': stream,
                            'ts': self.gpu_t, 'dur': us, 'args': args})
        self.gpu_t += us + 10
        self.t += max(10, launch_us + 2)

    def nest(self, names_args, body, width=50):
        """CPU ops nested in order (outermost first) around whatever `body` launches."""
        start, opened = self.t, []
        for name, args in names_args:
            opened.append(self.op(name, 0, args))
            self.t += 1
        body()
        self.t += 1
        for e in reversed(opened):
            e['dur'] = self.t - e['ts']
            self.t += 1

    def write(self, path, step_us, extra=None):
        step = {'ph': 'X', 'cat': 'user_annotation', 'name': 'ProfilerStep#1', 'pid': PID, 'tid': TID, 'ts': 900.0,
                'dur': step_us}
        doc = {'schemaVersion': 1, 'traceEvents': [step] + self.events}
        doc.update(extra or {})
        with open(path, 'w') as f:
            json.dump(doc, f, indent=0)
            f.write('\n')


def attention_and_nccl(path):
    t = Trace()
    t.gpu_t = 2000.0
    q, kv = [2, 4096, 32, 128], [2, 4096, 8, 128]
    bf16 = ['c10::BFloat16'] * 3
    for us in (1990, 2000, 2010):
        t.nest([('aten::scaled_dot_product_attention', {}),
                ('aten::_scaled_dot_product_flash_attention',
                 {'Input Dims': [[2, 32, 4096, 128], [2, 8, 4096, 128], [2, 8, 4096, 128], [], []], 'Input type': bf16}),
                ('aten::_flash_attention_forward',
                 {'Input Dims': [q, kv, kv, [], [], [], [], [], []], 'Input type': bf16})],
               lambda us=us: t.launch('void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>(Flash_fwd_params)', us))
    for main in (2400, 2400, 2600):
        def body(main=main):
            t.launch('void flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits>(Flash_bwd_params)', main)
            t.launch('void flash_bwd_convert_dq_kernel<Flash_bwd_kernel_traits>(Flash_bwd_params, int)', 100)
        t.nest([('autograd::engine::evaluate_function: ScaledDotProductFlashAttentionBackward0', {}),
                ('ScaledDotProductFlashAttentionBackward0', {}),
                ('aten::_scaled_dot_product_flash_attention_backward', {}),
                ('aten::_flash_attention_backward',
                 {'Input Dims': [q, q, kv, kv, q, [2, 32, 4096], [], []], 'Input type': bf16})], body)
    for mib in (1, 16, 256):
        n = mib * 1024 * 1024 // 2
        us = round(20 + 1.5 * mib * 1024 * 1024 / 150e9 * 1e6, 3)
        kargs = {'Collective name': 'allreduce', 'In msg nelems': n, 'Out msg nelems': n, 'Group size': 4,
                 'dtype': 'BFloat16'}
        t.nest([('c10d::allreduce_', {}), ('record_param_comms', {}), ('nccl:all_reduce', {}, )],
               lambda us=us, kargs=kargs: t.launch('ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)',
                                                   us, COMM_STREAM, kargs))
    for mib in (8, 64):
        n = mib * 1024 * 1024 // 2
        us = round(15 + 0.75 * mib * 1024 * 1024 / 120e9 * 1e6, 3)
        rpc = {'Collective name': '_allgather_base', 'In msg nelems': n // 4, 'Out msg nelems': n, 'Group size': 4,
               'dtype': 'BFloat16'}
        t.nest([('c10d::_allgather_base_', {}), ('record_param_comms', rpc), ('nccl:_all_gather_base', {})],
               lambda us=us: t.launch('ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)', us, COMM_STREAM))
    t.write(path, t.t - 900 + 10, {'distributedInfo': {'backend': 'nccl', 'rank': 0, 'world_size': 4}})


def no_evidence(path):
    t = Trace()
    t.gpu_t = 2000.0
    t.nest([('aten::mm', {})], lambda: t.launch('ampere_sgemm_128x64_tn', 50))
    t.write(path, t.t - 900 + 10)


def host_launches(path):
    t = Trace()
    t.gpu_t = 2000.0
    for i in range(120):
        t.nest([('aten::add', {})], lambda i=i: t.launch('void at::native::vectorized_elementwise_kernel<4>()', 3,
                                                         launch_us=7 + i % 3))
    t.write(path, t.t - 900 + 10)


def unsized_nccl(path):
    t = Trace()
    t.gpu_t = 2000.0
    t.nest([('aten::mm', {})], lambda: t.launch('ampere_sgemm_128x64_tn', 50))
    t.nest([('c10d::allreduce_', {}), ('nccl:all_reduce', {})],
           lambda: t.launch('ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)', 300, COMM_STREAM))
    t.write(path, t.t - 900 + 10)


if __name__ == '__main__':
    out = sys.argv[1]
    attention_and_nccl(os.path.join(out, 'calibrate_attention_nccl.json'))
    no_evidence(os.path.join(out, 'calibrate_no_evidence.json'))
    unsized_nccl(os.path.join(out, 'calibrate_unsized_nccl.json'))
    host_launches(os.path.join(out, 'calibrate_host_launches.json'))
