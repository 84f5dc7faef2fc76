#!/usr/bin/env python3
"""Writes the datasheet system configs (dgx_a100.json, dgx_h100.json, gb200.json) in SimuMax's system schema.

Every hardware number below carries its public source. Efficiency factors are NOT datasheet numbers: where a
measured table of the same GPU exists in this repository it is carried over (said per machine); elsewhere the
factor is an assumption, marked as such. `--check` exits 1 when a written file differs from what this script
makes (a ctest runs it).

Usage: make_datasheet.py [--check] [--out DIR]     (DIR defaults to the folder of this script)
"""
import argparse
import copy
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# Sources (public datasheets):
# [A100] NVIDIA A100 Tensor Core GPU datasheet (nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/
#        nvidia-a100-datasheet-nvidia-us-2188504-web.pdf): A100 80GB SXM: BF16 Tensor Core 312 TFLOPS (624 with
#        sparsity), GPU memory 80 GB HBM2e, memory bandwidth 2,039 GB/s, NVLink 600 GB/s (bidirectional).
#        No FP8 Tensor Cores.
# [DGXA] NVIDIA DGX A100 datasheet: 8x A100 80GB, 6x NVSwitch, 8x single-port ConnectX-6 VPI 200 Gb/s HDR
#        InfiniBand for the compute fabric (one per GPU).
# [H100] NVIDIA H100 Tensor Core GPU datasheet (H100 SXM5 80GB): BF16 Tensor Core 1,979 TFLOPS and FP8 3,958
#        TFLOPS *with sparsity* (dense: half, 989.4 and 1,978.9), memory 80 GB HBM3 at 3.35 TB/s, NVLink
#        900 GB/s (bidirectional).
# [DGXH] NVIDIA DGX H100 datasheet: 8x H100 SXM5, 4x NVSwitch, 8x ConnectX-7 400 Gb/s (NDR) compute ports
#        (four OSFP cages, two ports each), one per GPU.
# [GB200] NVIDIA GB200 NVL72 datasheet/product page: 72 Blackwell GPUs; FP16/BF16 Tensor Core 360 PFLOPS and FP8
#        720 PFLOPS for the rack *with sparsity* (dense, per GPU: 2.5 and 5 PFLOPS); HBM3e 13.4 TB at 576 TB/s for
#        the rack (per GPU 186 GB, 8 TB/s); fifth-generation NVLink 1.8 TB/s per GPU (bidirectional), one NVLink
#        domain of 72 GPUs; ConnectX-7 400 Gb/s InfiniBand, one per GPU (compute tray: 2 superchips, 4 GPUs,
#        4 NICs).

# Not datasheet numbers but the framework's, by GPU generation (the system key "workspaces", docs/accuracy.md):
# [TORCH] PyTorch aten/src/ATen/cuda/CublasHandlePool.cpp parseChosenWorkspaceSize: without CUBLAS_WORKSPACE_CONFIG,
#         ":4096:2:16:8" = 8,519,680 B, and 32 MiB when properties->major == 9 (Hopper); Blackwell (major 10) got
#         32 MiB in pytorch/pytorch#153556 and again in #175344 (the GB200 golden values of Megatron-LM d98e8a64
#         show both: of the 28 golden files without the variable, 12 match 32 MiB and 16 match 8.125 MiB); 32 MiB,
#         today's PyTorch, is taken.
# [TE]    TransformerEngine transformer_engine/pytorch/cpp_extensions/gemm.py get_cublas_workspace_size_bytes:
#         4,194,304 B before Hopper; 32 MiB + 1 KiB (alignment, TE >= 2.10) when major >= 9.
def workspaces(torch_bytes, te_bytes):
    return {"torch_cublas_bytes": torch_bytes, "te_cublas_bytes": te_bytes}


AMPERE_WORKSPACES = workspaces(4096 * 1024 * 2 + 16 * 1024 * 8, 4 * 1024 * 1024)  # [TORCH] [TE]
HOPPER_ON_WORKSPACES = workspaces(32 * 1024 * 1024, 32 * 1024 * 1024 + 1024)      # [TORCH] [TE]

A100_PCIE = os.path.join(HERE, "a100_pcie.json")  # SimuMax's A100 measurement, shipped in this folder
B200 = os.path.join(HERE, "b200_bf16.json")       # SimuMax's B200 measurement, shipped in this folder

NET_OPS = {  # SimuMax's ring formulas: bytes moved = scale * (n + offset) / n * size
    "all_reduce": {"scale": 2, "offset": -1},
    "all_gather": {"scale": 1, "offset": -1},
    "reduce_scatter": {"scale": 1, "offset": -1},
    "p2p": {"scale": 1, "offset": 0},
    "all2all": {"scale": 1, "offset": -1},
}


def network(gbps, latency_us, efficiency):
    """A network tier: `gbps` GB/s per GPU and direction; `efficiency` the assumed achieved fraction (busbw)."""
    ops = {}
    for name, shape in NET_OPS.items():
        ops[name] = dict(shape, efficient_factor=efficiency, latency_us=latency_us)
    return {"processor_usage": 0.0, "bandwidth": {"efficient_factor": 1.0, "gbps": gbps, "latency_us": latency_us},
            "op": ops}


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def with_peaks(ops, bf16_tflops, fp8_tflops):
    """The measured op entries of another machine, re-based on this machine's datasheet peaks."""
    out = copy.deepcopy(ops)
    for name, op in out.items():
        op["tflops"] = fp8_tflops if name.startswith("fp8") else bf16_tflops
    return out


def bandwidths(hbm_gbps, efficiency, latency_us):
    names = ["default", "ce", "ce_fusion", "permute_fwd", "permute_bwd"]
    return {n: {"efficient_factor": efficiency, "gbps": hbm_gbps, "latency_us": latency_us} for n in names}


def dgx_a100():
    a100 = load(A100_PCIE)
    ops = with_peaks(a100["accelerator"]["op"], 312.0, 312.0)  # [A100]; no FP8: fp8 entries price as bf16
    bw = copy.deepcopy(a100["accelerator"]["bandwidth"])
    for entry in bw.values():
        entry["gbps"] = 2039.0  # [A100] HBM2e
    return {
        "sys_name": "dgx_a100_sxm4_80gb",
        "num_per_node": 8,  # [DGXA]
        "accelerator": {"backend": "cuda", "mem_gbs": 80, "mode": "roofline", "op": ops, "bandwidth": bw},
        "networks": {
            "intra_with_pcie": False,
            # [A100] NVLink 600 GB/s bidirectional -> 300 GB/s per direction through the NVSwitches.
            # Achieved fraction 0.75: assumption (no public NCCL table for this machine in the repository).
            "high_intra_node": network(300.0, 10.0, 0.75),
            # [DGXA] one 200 Gb/s HDR port per GPU = 25 GB/s. Fraction 0.8: assumption.
            "inter_node": network(25.0, 20.0, 0.8),
        },
        "workspaces": AMPERE_WORKSPACES,
    }


def dgx_h100():
    # No measured H100 table exists here: the A100 table's shapes are kept with its factors (the same Megatron
    # GEMM shapes, one generation apart), re-based on the H100 peaks. Assumption, stated in platforms/README.md.
    a100 = load(A100_PCIE)
    ops = with_peaks(a100["accelerator"]["op"], 989.4, 1978.9)  # [H100] dense = half the sparse figure
    return {
        "sys_name": "dgx_h100_sxm5_80gb",
        "num_per_node": 8,  # [DGXH]
        "accelerator": {"backend": "cuda", "mem_gbs": 80, "mode": "roofline", "op": ops,
                        "bandwidth": bandwidths(3350.0, 0.8, 20.0)},  # [H100] HBM3; fraction: assumption
        "networks": {
            "intra_with_pcie": False,
            "high_intra_node": network(450.0, 10.0, 0.75),  # [H100] 900 GB/s bidirectional
            "inter_node": network(50.0, 20.0, 0.8),  # [DGXH] 400 Gb/s per GPU
        },
        "workspaces": HOPPER_ON_WORKSPACES,
    }


def gb200():
    # The same Blackwell GPU as SimuMax's measured B200 (tables carried over, re-based on GB200's peaks).
    b200 = load(B200)
    ops = with_peaks(b200["accelerator"]["op"], 2500.0, 5000.0)  # [GB200]
    bw = copy.deepcopy(b200["accelerator"]["bandwidth"])
    for entry in bw.values():
        entry["gbps"] = 8000.0  # [GB200] HBM3e per GPU
    return {
        "sys_name": "gb200_nvl72",
        # [GB200] one NVLink domain of 72 GPUs: every Megatron test world (2 trays x 4 GPUs) is inside it.
        "num_per_node": 72,
        "accelerator": {"backend": "cuda", "mem_gbs": 186, "mode": "roofline", "op": ops, "bandwidth": bw},
        "networks": {
            "intra_with_pcie": False,
            "high_intra_node": network(900.0, 10.0, 0.75),  # [GB200] 1.8 TB/s bidirectional
            "inter_node": network(50.0, 20.0, 0.8),  # [GB200] ConnectX-7 400 Gb/s per GPU
        },
        "workspaces": HOPPER_ON_WORKSPACES,
    }


def render(doc):
    return json.dumps(doc, indent=1, sort_keys=True) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="compare instead of writing; exit 1 on a difference")
    p.add_argument("--out", default=HERE, help="folder to write into (default: this script's folder)")
    a = p.parse_args()
    bad = 0
    for name, make in (("dgx_a100.json", dgx_a100), ("dgx_h100.json", dgx_h100), ("gb200.json", gb200)):
        path = os.path.join(a.out, name)
        text = render(make())
        if a.check:
            try:
                with open(path, encoding="utf-8") as f:
                    same = f.read() == text
            except OSError as e:
                print(f"error: {path}: cannot read ({e.strerror})", file=sys.stderr)
                same = False
            if not same:
                print(f"error: {path} differs from what {os.path.basename(__file__)} makes; rerun it", file=sys.stderr)
                bad = 1
        else:
            tmp = path + ".tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, path)
    return bad


if __name__ == "__main__":
    sys.exit(main())
