#!/bin/sh
# Runs every what-if scenario on SimGrid with every rank (--ranks all) and prints the table of docs/whatif.md:
#   scenarios/whatif/run_whatif.sh [path/to/simumax-sim] [output folder]
# Exposed DP communication = step time - end of the pipeline - optimizer (the DP reduce-scatter / all-gather
# run after the pipeline flush and are not overlapped here, overlap_grad_reduce = false).
set -eu
sim=${1:-build/tools/simumax-sim}
out=${2:-out/whatif}
mkdir -p "$out"
"$sim" run scenarios/whatif/llama3_70b_tp8_pp2_dp8_single_switch.json -q -o "$out/fast"
for s in scenarios/whatif/llama3_70b_tp8_pp2_dp8_*.json; do
  name=$(basename "$s" .json)
  "$sim" run "$s" -q --executor sim --ranks all -o "$out/$name"
done
# NVLink halved where TP feels it: in the system config (TP collectives are priced there), with the NVLink-
# halved platform. A copy of the system and of the scenario, made here rather than shipped.
python3 - "$out" <<'PY'
import json, os, sys
out = os.path.abspath(sys.argv[1])
system = json.load(open("platforms/b200_bf16.json"))
system["networks"]["high_intra_node"]["bandwidth"]["gbps"] /= 2
json.dump(system, open(os.path.join(out, "b200_nvlink_half.json"), "w"))
s = json.load(open("scenarios/whatif/llama3_70b_tp8_pp2_dp8_nvlink_half.json"))
s.update(name="nvlink_half_in_system", model=os.path.abspath("models/llama3-70b.json"),
         system=os.path.join(out, "b200_nvlink_half.json"), platform=os.path.abspath("scenarios/whatif/nvlink_half.xml"))
json.dump(s, open(os.path.join(out, "nvlink_half_in_system.json"), "w"))
PY
"$sim" run "$out/nvlink_half_in_system.json" -q --executor sim --ranks all -o "$out/llama3_70b_tp8_pp2_dp8_nvlink_half_in_system"
python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
def load(d):
    s = json.load(open(os.path.join(out, d, "summary.json")))
    pipe = max(st["pipeline_end_ms"] for st in s["stages"])
    optim = max(st["optimizer_ms"] for st in s["stages"])
    return s["step_time_ms"], pipe, s["step_time_ms"] - pipe - optim
fast = load("fast")
print("| platform | step ms | vs cost model | pipeline ms | exposed DP ms | busiest links (utilisation over the step) |")
print("|---|---|---|---|---|---|")
print("| cost model (`fast`) | %.1f | | %.1f | %.1f | |" % fast)
for d in sorted(x for x in os.listdir(out) if x.startswith("llama3")):
    step, pipe, dp = load(d)
    links = json.load(open(os.path.join(out, d, "links.json")))["links"]
    top = ", ".join("%s %.0f%%" % (l["name"], 100 * l["utilisation"]) for l in links[:3])
    print("| %s | %.1f | %+.1f%% | %.1f | %.1f | %s |" % (d.replace("llama3_70b_tp8_pp2_dp8_", ""), step,
          100 * (step / fast[0] - 1), pipe, dp, top))
PY
