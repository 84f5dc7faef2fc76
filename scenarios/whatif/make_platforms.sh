#!/bin/sh
# Regenerates the platform files of the what-if scenarios (docs/whatif.md). Run from the repository root:
#   scenarios/whatif/make_platforms.sh [path/to/simumax-sim]
# Three of them are edits of a generated file, made here the way a user would make them by hand.
set -eu
sim=${1:-build/tools/simumax-sim}
dir=scenarios/whatif
system=platforms/b200_bf16.json
gen() { out=$1; shift; "$sim" platform "$system" --nodes 16 "$@" -o "$dir/$out"; }

gen single_switch.xml
gen fat_tree_full.xml --topology fat-tree --oversubscription 1
gen fat_tree_2to1.xml --topology fat-tree --oversubscription 2
gen fat_tree_4to1.xml --topology fat-tree --oversubscription 4
gen fat_tree_8to1.xml --topology fat-tree --oversubscription 8
gen rail_4to1.xml --topology rail --oversubscription 4

# IB halved / NVLink halved: every NIC (25 GiB/s) or NVLink (900 GiB/s) link at half its bandwidth.
sed -e 's/bandwidth="25GiBps"/bandwidth="12.5GiBps"/' -e 's/^  simumax-sim platform: /  EDITED: every NIC link halved (25 -> 12.5 GiBps). simumax-sim platform: /' \
  "$dir/single_switch.xml" > "$dir/ib_half.xml"
sed -e 's/bandwidth="900GiBps"/bandwidth="450GiBps"/' -e 's/^  simumax-sim platform: /  EDITED: every NVLink halved (900 -> 450 GiBps). simumax-sim platform: /' \
  "$dir/single_switch.xml" > "$dir/nvlink_half.xml"

# Shared leaves: the 4:1 fat-tree with its nodes moved so that leaf k holds nodes 2k, 2k+1 (pipeline stage 0)
# and 8+2k, 9+2k (stage 1). Each stage's DP rings then cross a leaf boundary every second node, and both
# stages' rings cross the same uplinks: two independent sets of DP groups, as two jobs would, share them.
python3 - "$dir/fat_tree_4to1.xml" "$dir/shared_leaves_4to1.xml" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
node_block = r'(        <!-- node (\d+): job ranks [^\n]*\n(?:        <(?:host|link|host_link) [^\n]*\n)+)'
blocks = {int(m.group(2)): m.group(1) for m in re.finditer(node_block, text)}
def leaf(k, nodes):
    return ('      <!-- leaf switch "leaf%d": nodes %s (EDITED: two nodes of each pipeline stage); 32 NIC ports -->\n'
            '      <zone id="leaf%d" routing="Cluster">\n        <router id="leaf%d.switch"/>\n' % (k, ", ".join(map(str, nodes)), k, k)
            + "".join(blocks[n] for n in nodes) + '      </zone>\n')
start = text.index('      <!-- leaf switch "leaf0"')
end = text.index('      <!-- the spine tier')
leaves = "".join(leaf(k, [2 * k, 2 * k + 1, 8 + 2 * k, 9 + 2 * k]) for k in range(4))
text = text[:start] + leaves + text[end:]
text = text.replace("  simumax-sim platform: ", "  EDITED: leaf k holds nodes 2k, 2k+1, 8+2k, 9+2k. simumax-sim platform: ", 1)
open(sys.argv[2], "w").write(text)
PY
echo "wrote the platforms of $dir"
