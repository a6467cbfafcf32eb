#!/usr/bin/env bash
# The calibration runs behind the fc-grammar presets' learning rates, warm-up and zero-started head
# (docs/feature-collapse.md, "Appendix A.5"): one `nclab run fc-grammar` after another, each
# recorded into the ledger when it finishes (`nclab evidence add`; recording a run twice writes
# the same record). About an hour on one CPU core (2026-12-03), most of it the medium rows.
#
#   OUT=/work/bg/cal LEDGER=evidence bash scripts/a5_calibration.sh
#
# Run it again to resume: a finished run is skipped, an unfinished one resumed from its checkpoint.
# Keep OUT outside /tmp so that a later session finds it. NICE=19 lets it take only what other
# work leaves idle.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-runs/a5-calibration}
LEDGER=${LEDGER:-evidence}
NICE=${NICE:-0}
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
PY=${PY:-python3}
mkdir -p "$OUT"
NO_WARMUP=(train.schedule.kind=constant train.schedule.warmup=0)
WIDE=("model.widths=[32,64,64,64]" model.hidden=128)

run() { # NAME PRESET SEEDS KEY=VALUE...
  local name=$1 preset=$2 seeds=$3 dir=$OUT/$1
  shift 3
  if [ -f "$dir/summary.json" ]; then
    echo "$name: finished earlier"
  else
    local sets=()
    for s in "$@"; do sets+=(--set "$s"); done
    if [ -d "$dir" ]; then
      nice -n "$NICE" "$PY" -m nclab run --resume "$dir" >"$OUT/$name.log" 2>&1
    else
      nice -n "$NICE" "$PY" -m nclab run fc-grammar --preset "$preset" --seeds "$seeds" \
        "${sets[@]}" --out "$dir" >"$OUT/$name.log" 2>&1
    fi || { echo "$name: failed, see $OUT/$name.log"; return; }
    echo "$(date +%H:%M:%S) $name: finished"
  fi
  "$PY" -m nclab evidence add "$dir" --ledger "$LEDGER" >>"$OUT/$name.log" 2>&1 ||
    echo "$name: not recorded, see $OUT/$name.log"
}

# the learning rate and the warm-up (quick: 2 choices of 4 children; medium: the paper's 5 choices)
run quick-lr3e-3 a5-cfg-quick 3 train.lr=0.003
run quick-lr3e-3-warmup200 a5-cfg-quick 3 train.lr=0.003 train.schedule.kind=warmup \
  train.schedule.warmup=200
run c3-16k a5-cfg-quick 3 data.choices=3 data.n_train=16000
run med-lr1e-3-nowarm a5-cfg-medium 3 train.lr=0.001 "${NO_WARMUP[@]}"
run med-nowarm a5-cfg-medium 3 "${NO_WARMUP[@]}"
run med-wide-lr3e-3 a5-cfg-medium 3 train.lr=0.003 "${WIDE[@]}" "${NO_WARMUP[@]}"
run med-wide-nowarm a5-cfg-medium 3 "${WIDE[@]}" "${NO_WARMUP[@]}"
# the paper's 8 children (4096-word sentences): the top block dies unless the head starts at zero
run quick-c8-lr3e-3 a5-cfg-quick 1 data.children=8 data.n_train=8000 train.lr=0.003
run med-c8 a5-cfg-medium 1 data.children=8
run med-c8-zero a5-cfg-medium 2 data.children=8 model.zero_head=true
run med-c8-zero-wide a5-cfg-medium 1 data.children=8 model.zero_head=true "${WIDE[@]}" \
  train.batch_size=50
echo "$(date +%H:%M:%S) calibration done"
