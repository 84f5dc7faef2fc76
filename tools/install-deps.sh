#!/bin/sh
# Installs the Debian 12 packages simumax-sim needs, only those missing. Uses sudo when not root.
# chromium: the HTML report is tested in headless Chromium (tests/html_report_browser_test.cpp);
# libcpp-httplib-dev: the HTTP server of `simumax-sim serve`; libjemalloc-dev: the CLI's allocator;
# slurm-wlm, munge: `simumax-sim sweep --slurm` is tested on a one-node Slurm started by the test
# (tests/sweep_slurm_test.sh; the daemons run only during that test). git: tests/bridge_import_test.sh builds a
# repository of fixture trees (tools/import_bridge_perf --git reads each release's recipe at its tag). zsh: the zsh
# completion script is loaded by zsh in tests/completion_test.sh.
# usage: tools/install-deps.sh [fuzz]
set -eu
PACKAGES="cmake make g++ pkg-config libsimgrid-dev nlohmann-json3-dev libboost-graph-dev libspdlog-dev \
libgtest-dev libcli11-dev zlib1g-dev libre2-dev python3 python3-yaml python3-dev pybind11-dev python3-pytest \
chromium libcpp-httplib-dev libjemalloc-dev slurm-wlm munge git zsh"
# `make fuzz` also needs clang and its libFuzzer runtime.
if [ "${1:-}" = fuzz ]; then PACKAGES="$PACKAGES clang libclang-rt-dev"; fi
missing=""
for p in $PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "installing:$missing" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
