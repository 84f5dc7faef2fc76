#!/bin/bash
# `simumax-sim completion bash|zsh` and `simumax-sim man` (issue 34): bash completes commands and options from the
# script, zsh loads it as a completion function, and the man page renders without a warning and names every
# command. Usage: completion_test.sh SIMUMAX_SIM
set -euo pipefail
sim=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
commands=$("$sim" --help | sed -n '/^Subcommands:/,$p' | awk 'NR > 1 && /^  [a-z]/ {print $1}')
[ -n "$commands" ] || fail "no commands in --help"

# bash: the completion function answers as a shell would ask.
"$sim" completion bash > "$tmp/simumax-sim.bash"
# shellcheck disable=SC1091
source "$tmp/simumax-sim.bash"
complete_words() {  # the words typed so far; prints the candidates of the last one
  COMP_WORDS=("$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _simumax_sim
  echo "${COMPREPLY[*]}"
}
[ "$(complete_words simumax-sim ru)" = "run" ] || fail "bash: 'ru' -> '$(complete_words simumax-sim ru)'"
for c in $commands; do
  complete_words simumax-sim "" | tr ' ' '\n' | grep -qx "$c" || fail "bash: command $c is not offered"
done
[ "$(complete_words simumax-sim run --trace-f)" = "--trace-format" ] || fail "bash: run --trace-f"
complete_words simumax-sim --log-level debug search --obj | grep -qx -- "--objective" || fail "bash: search --obj"
complete_words simumax-sim completion "" >/dev/null
# A file argument completes to files.
touch "$tmp/my_scenario.json"
[ "$(cd "$tmp" && complete_words simumax-sim run my_)" = "my_scenario.json" ] || fail "bash: file completion"

# zsh: the script parses, and compinit registers it for simumax-sim from an fpath folder.
mkdir "$tmp/fpath"
"$sim" completion zsh > "$tmp/fpath/_simumax-sim"
zsh -n "$tmp/fpath/_simumax-sim" || fail "zsh: the script does not parse"
got=$(HOME=$tmp zsh -f -c "fpath=($tmp/fpath \$fpath); autoload -U compinit; compinit -u -d $tmp/zcompdump; \
print -r -- \$_comps[simumax-sim]")
[ "$got" = "_simumax-sim" ] || fail "zsh: compinit registered '$got' for simumax-sim"
for c in $commands; do grep -q "^    '$c:" "$tmp/fpath/_simumax-sim" || fail "zsh: command $c missing"; done

# The man page: groff renders it without a warning, and it documents every command and run's options.
"$sim" man > "$tmp/simumax-sim.1"
warnings=$(groff -man -Tutf8 -ww -z "$tmp/simumax-sim.1" 2>&1) || fail "groff failed"
[ -z "$warnings" ] || fail "groff warnings: $warnings"
text=$(MANWIDTH=100 man -l "$tmp/simumax-sim.1" 2>/dev/null | col -b)
for c in $commands; do echo "$text" | grep -q "^   $c\$" || fail "man: command $c has no section"; done
echo "$text" | grep -q -- "--trace-format" || fail "man: run's --trace-format missing"
echo "$text" | grep -q "simumax-sim $("$sim" --version | cut -d' ' -f2)" || fail "man: no version"
[ "$("$sim" completion fish 2>&1 >/dev/null; echo $?)" != 0 ] || fail "completion fish was accepted"
echo "completion and man page: ok ($(echo $commands | wc -w) commands)"
