#!/usr/bin/env bash
# Golden outputs of pygraph-analyze on the traces of real workloads checked in under
# tests/e2e/golden (README.md there): runs one case (a subcommand and its options) on NAME.trace
# and compares what it prints, and the files it writes, with NAME.<output> in the golden folder
# by `diff -u`. With PYGRAPH_UPDATE_GOLDEN=1 it writes them there instead, for a deliberate
# change: `PYGRAPH_UPDATE_GOLDEN=1 ctest -R golden_outputs`, then review `git diff`.
#
# usage: golden_outputs.sh ANALYZER GOLDEN_DIR NAME CASE
set -euo pipefail

if [[ $# -ne 4 ]]; then
  echo "usage: $0 ANALYZER GOLDEN_DIR NAME CASE" >&2
  exit 1
fi
analyzer=$1
golden=$(cd "$2" && pwd)
name=$3
case=$4
trace=$name.trace

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
# The analyzer prints the paths it is given: relative ones are the same on every machine.
ln -s "$golden/$trace" "$trace"

# Runs the analyzer with its standard output into file $1; any exit status but 0 or any word
# on stderr fails the case (the golden traces are whole).
run() {
  local out=$1
  shift
  local status=0
  "$analyzer" "$@" >"$out" 2>stderr || status=$?
  if [[ $status -ne 0 || -s stderr ]]; then
    echo "pygraph-analyze $* exited with $status:"
    cat stderr
    exit 1
  fi
}

outputs=()
case $case in
  summary.txt | sequences.txt | breaks.txt | simulate.txt)
    run "$name.$case" "${case%.txt}" "$trace"
    outputs=("$name.$case")
    ;;
  summary.json | sequences.json | breaks.json | simulate.json)
    run "$name.$case" "${case%.json}" --json "$trace"
    outputs=("$name.$case")
    ;;
  plot)
    run "$name.plot.json" plot --json --out "$name.plot.svg" "$trace"
    outputs=("$name.plot.json" "$name.plot.svg")
    ;;
  export)
    # The first 120 events: the whole timeline of a golden trace is several hundred KB.
    run "$name.export.json" export --json --limit 120 --perfetto "$name.timeline.json" "$trace"
    outputs=("$name.export.json" "$name.timeline.json")
    ;;
  trim)
    # Two steps' worth from the middle, and what `summary` reads in the cut.
    run "$name.trim.json" trim --json --skip 100 --launches 110 --out cut.trace "$trace"
    run "$name.trim-summary.txt" summary cut.trace
    outputs=("$name.trim.json" "$name.trim-summary.txt")
    ;;
  *)
    echo "unknown case '$case'" >&2
    exit 1
    ;;
esac

status=0
for f in "${outputs[@]}"; do
  if [[ ${PYGRAPH_UPDATE_GOLDEN:-} == 1 ]]; then
    cp "$f" "$golden/$f"
    echo "wrote $golden/$f"
  elif [[ ! -f $golden/$f ]]; then
    echo "no golden $golden/$f: PYGRAPH_UPDATE_GOLDEN=1 ctest -R golden_outputs writes it"
    status=1
  elif ! diff -u "$golden/$f" "$f"; then
    echo "$f differs from the golden (above); if the change is meant, PYGRAPH_UPDATE_GOLDEN=1" \
      "ctest -R golden_outputs writes it anew"
    status=1
  fi
done
exit $status
