#!/usr/bin/env bash
# The checks that need a GPU, as one short script for a machine with CUDA (about 3 minutes on an
# H200, before bench_curvature was added): the device tests (statistics, probe, curvature and
# deep-ln training on CUDA equal the CPU's numbers), bench_metrics and bench_curvature on CUDA, and
# the rn1-ce-quick preset on CUDA, and 10 000 SGD steps of the no-weight-decay feature-collapse
# preset (App. A.1's 5 M-step runs are GPU work: its per-step time on the GPU). Logs go to $OUT
# (or runs/gpu-check); run directories to $NCLAB_GPU_RUNS (or $OUT/runs).
#
# With NCLAB_GPU_LEDGER=DIR the measurements are recorded into a ledger at DIR as they finish:
# the two benchmarks as benchmark records (`nclab evidence bench`, label "cuda, <GPU name>"), the
# timed no-weight-decay run as a run record (`nclab evidence add`), and $OUT/ledger.tar packs DIR
# after each, so that what finished comes back even if the machine is taken away. On the checkout:
# `tar -xf ledger.tar -C evidence`. The rn1-ce-quick run on CUDA is a check (its numbers beside
# the CPU's in the log), not recorded: it would become that preset's newest quick evidence.
# A tree sent without its .git names its commit by NCLAB_SOURCE_COMMIT (nclab.provenance).
#
# It runs from the source tree (PYTHONPATH=src) with the machine's own python3 and torch. nclab's
# dependencies that such an image may lack (pydantic and its own: pydantic-core, annotated-types,
# typing-inspection; tomli-w; mnist1d is not needed) can travel as wheels in .whl/, which this
# script installs to /tmp/site first when the folder exists.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-runs/gpu-check}
RUNS=${NCLAB_GPU_RUNS:-$OUT/runs}
LEDGER=${NCLAB_GPU_LEDGER:-}
mkdir -p "$OUT" "$RUNS"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site
fi
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 NCLAB_PROGRESS=0
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(),
torch.cuda.get_device_name(0) if torch.cuda.is_available() else '')" | tee "$OUT/env.txt"
GPU=$(python3 -c "import torch; print(torch.cuda.get_device_name(0))")
pack() { if [ -n "$LEDGER" ]; then tar -cf "$OUT/ledger.tar" -C "$LEDGER" .; fi; }
# a benchmark, recorded when a ledger is given: bench SCRIPT LOG ARGS...
bench() {
  local script=$1 log=$2
  shift 2
  if [ -n "$LEDGER" ]; then
    python3 -m nclab evidence bench "$script" --label "cuda, $GPU" --ledger "$LEDGER" -- "$@" \
      2>&1 | tee "$OUT/$log"
    pack
  else
    python3 "$script" "$@" 2>&1 | tee "$OUT/$log"
  fi
}
python3 -m pytest -q -p no:cacheprovider tests/test_device.py \
  tests/test_curvature.py::test_on_the_inputs_device_equals_the_cpu 2>&1 | tee "$OUT/test_device.txt"
bench benchmarks/bench_metrics.py bench_metrics_cuda.txt --device cuda --repeats 5
python3 -m nclab run feature-collapse --preset no-wd-fig3 --set device=cuda --set train.epochs=200 \
  --set log_every=100 --set checkpoint_every=100 --out "$RUNS/fc-no-wd" --json > "$RUNS/fc_no_wd.json"
python3 -c "import json; s = json.load(open('$RUNS/fc_no_wd.json')); print('feature-collapse',
'no-wd-fig3 on cuda:', s['steps'], 'steps in', round(s['seconds'], 1), 's:',
round(1e3 * s['seconds'] / s['steps'], 3), 'ms a step (measuring included)')" \
  | tee "$OUT/fc_no_wd_summary.txt"
if [ -n "$LEDGER" ]; then
  python3 -m nclab evidence add "$RUNS/fc-no-wd" --ledger "$LEDGER" | tee -a "$OUT/fc_no_wd_summary.txt"
  pack
fi
python3 -m nclab run deep-ln --preset rn1-ce-quick --set device=cuda --out "$RUNS/deep-ln" \
  --json > "$RUNS/deep_ln.json"
python3 -c "import json; s = json.load(open('$RUNS/deep_ln.json')); print('deep-ln on cuda:',
{k: s['trend'][k] for k in ('nc1_ratio', 'nc2_ratio', 'objective_gap_ratio', 'objective_gap_ratio_median')},
'lower bound holds:', s['lower_bound_holds'], 'seconds:', round(s['seconds'], 1))" \
  | tee "$OUT/deep_ln_summary.txt"
bench benchmarks/bench_curvature.py bench_curvature_cuda.txt --device cuda --repeats 3
