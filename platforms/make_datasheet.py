#!/usr/bin/env python3
"""Writes the datasheet system configs (dgx_a100.json, dgx_h100.json, dgx_b200.json, dgx_b300.json, gb200.json,
gb300.json) in SimuMax's system schema.

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

# [HGXB] NVIDIA HGX B200 / DGX B200 datasheet: 8x B200 (180 GB HBM3e, 8 TB/s each); for the 8 GPUs FP4 Tensor
#        Core 144 PFLOPS, FP8/FP6 72 PFLOPS, FP16/BF16 36 PFLOPS *with sparsity* (dense, per GPU: 9, 4.5 and 2.25
#        PFLOPS); fifth-generation NVLink 1.8 TB/s per GPU (bidirectional); 8x ConnectX-7 400 Gb/s compute ports.
# [HGXB3] NVIDIA HGX B300 / DGX B300 datasheet: 8x Blackwell Ultra (288 GB HBM3e, 8 TB/s each); for the 8 GPUs
#        FP4 Tensor Core 108 PFLOPS dense (144 with sparsity), FP8/FP6 72 PFLOPS and FP16/BF16 36 PFLOPS with
#        sparsity (dense, per GPU: 13.5, 4.5 and 2.25 PFLOPS); NVLink 1.8 TB/s per GPU; 8x ConnectX-8 800 Gb/s.
# [GB300] NVIDIA GB300 NVL72 datasheet/product page: 72 Blackwell Ultra GPUs; FP4 Tensor Core 1,080 PFLOPS dense
#        (1,440 with sparsity), FP8/FP6 720 PFLOPS and FP16/BF16 360 PFLOPS with sparsity for the rack (dense, per
#        GPU: 15, 5 and 2.5 PFLOPS); HBM3e up to 21 TB at 576 TB/s (per GPU 288 GB, 8 TB/s); NVLink 1.8 TB/s
#        per GPU, one domain of 72; ConnectX-8 800 Gb/s SuperNIC per GPU.
# [GB200-FP4] [GB200]'s FP4 Tensor Core 1,440 PFLOPS for the rack with sparsity: 10 PFLOPS dense per GPU.
# Block-scaled GEMMs (MXFP8, NVFP4; docs/low-precision.md) need Blackwell's fifth-generation Tensor Cores: only
# the Blackwell machines list "mxfp8_*" and "nvfp4_*" entries. MXFP8 runs at the FP8 peak, NVFP4 at the FP4 peak.

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
    """A network tier: `gbps` GB/s per direction; `efficiency` the assumed achieved fraction (busbw). NVLink's
    tier is per GPU; the inter-node tier, as in SimuMax's configs, is the node's (every NIC of the NVLink domain
    together): the cost model divides it among the GPUs that share it (an EP or CP all-to-all, a PP send: by
    num_per_node) and the generated platform gives each GPU's NIC gbps / num_per_node (docs/whatif.md)."""
    ops = {}
    for name, shape in NET_OPS.items():
        ops[name] = dict(shape, efficient_factor=efficiency, latency_us=latency_us)
    return {"processor_usage": 0.0, "bandwidth": {"efficient_factor": 1.0, "gbps": gbps, "latency_us": latency_us},
            "op": ops}


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def with_peaks(ops, bf16_tflops, fp8_tflops, fp4_tflops=None):
    """The measured op entries of another machine, re-based on this machine's datasheet peaks. No machine here has
    a measured low-precision table: its entries carry efficient_factor 0 and no shapes ("unmeasured"), and the
    engine prices such a GEMM at the bf16 GEMM's efficiency of its shape (docs/low-precision.md). With
    `fp4_tflops` (Blackwell): the block-scaled entries too."""
    out = copy.deepcopy(ops)
    for name, op in out.items():
        op["tflops"] = fp8_tflops if name.startswith("fp8") else bf16_tflops
    low = {"fp8": fp8_tflops}
    if fp4_tflops is not None:
        low.update(mxfp8=fp8_tflops, nvfp4=fp4_tflops)
    for prefix, tflops in low.items():
        for gemm in ("matmul", "group_matmul"):
            out[prefix + "_" + gemm] = {"accurate_efficient_factor": {}, "efficient_factor": 0, "tflops": tflops}
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
            # [DGXA] one 200 Gb/s HDR port per GPU = 25 GB/s, 8 per node. Fraction 0.8: assumption.
            "inter_node": network(8 * 25.0, 20.0, 0.8),
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
            "inter_node": network(8 * 50.0, 20.0, 0.8),  # [DGXH] 400 Gb/s per GPU, 8 per node
        },
        "workspaces": HOPPER_ON_WORKSPACES,
    }


def blackwell(sys_name, num_per_node, mem_gb, peaks, nic_gbps):
    """A Blackwell machine: SimuMax's measured B200 tables (the same GPU generation) re-based on its datasheet
    `peaks` (bf16, fp8, fp4 dense TFLOPS), 8 TB/s HBM3e, NVLink 1.8 TB/s bidirectional (900 GB/s per
    direction) across `num_per_node` GPUs, one NIC of `nic_gbps` GB/s per GPU. Achieved fractions: assumptions."""
    b200 = load(B200)
    ops = with_peaks(b200["accelerator"]["op"], *peaks)
    bw = copy.deepcopy(b200["accelerator"]["bandwidth"])
    for entry in bw.values():
        entry["gbps"] = 8000.0
    return {
        "sys_name": sys_name,
        "num_per_node": num_per_node,
        "accelerator": {"backend": "cuda", "mem_gbs": mem_gb, "mode": "roofline", "op": ops, "bandwidth": bw},
        "networks": {
            "intra_with_pcie": False,
            "high_intra_node": network(900.0, 10.0, 0.75),
            "inter_node": network(num_per_node * nic_gbps, 20.0, 0.8),
        },
        "workspaces": HOPPER_ON_WORKSPACES,
    }


def gb200():
    # [GB200] [GB200-FP4]; one NVLink domain of 72 GPUs: every Megatron test world (2 trays x 4 GPUs) is inside
    # it; ConnectX-7 400 Gb/s per GPU.
    return blackwell("gb200_nvl72", 72, 186, (2500.0, 5000.0, 10000.0), 50.0)


def gb300():
    return blackwell("gb300_nvl72", 72, 288, (2500.0, 5000.0, 15000.0), 100.0)  # [GB300]


def dgx_b200():
    return blackwell("dgx_b200", 8, 180, (2250.0, 4500.0, 9000.0), 50.0)  # [HGXB]


def dgx_b300():
    return blackwell("dgx_b300", 8, 288, (2250.0, 4500.0, 13500.0), 100.0)  # [HGXB3]


def render(doc):
    return json.dumps(doc, indent=1, sort_keys=True) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="compare instead of writing; exit 1 on a difference")
    p.add_argument("--out", default=HERE, help="folder to write into (default: this script's folder)")
    a = p.parse_args()
    bad = 0
    machines = (("dgx_a100.json", dgx_a100), ("dgx_h100.json", dgx_h100), ("dgx_b200.json", dgx_b200),
                ("dgx_b300.json", dgx_b300), ("gb200.json", gb200), ("gb300.json", gb300))
    for name, make in machines:
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
