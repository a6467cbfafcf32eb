#!/usr/bin/env bash
# The checks that need a GPU, as one short script for a machine with CUDA (about 3 minutes on an
# H200, before bench_curvature was added): the device tests (statistics, probe, curvature and
# deep-ln training on CUDA equal the CPU's numbers), bench_metrics and bench_curvature on CUDA, and
# the rn1-ce-quick preset on CUDA, and 10 000 SGD steps of the no-weight-decay feature-collapse
# preset (App. A.1's 5 M-step runs are GPU work: its per-step time on the GPU). Logs go to $OUT
# (or runs/gpu-check).
#
# It runs from the source tree (PYTHONPATH=src) with the machine's own python3 and torch. nclab's
# dependencies that such an image may lack (pydantic and its own: pydantic-core, annotated-types,
# typing-inspection; mnist1d is not needed) can travel as wheels in .whl/, which this script
# installs to /tmp/site first when the folder exists.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-runs/gpu-check}
mkdir -p "$OUT"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site
fi
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 NCLAB_PROGRESS=0
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(),
torch.cuda.get_device_name(0) if torch.cuda.is_available() else '')" | tee "$OUT/env.txt"
python3 -m pytest -q -p no:cacheprovider tests/test_device.py \
  tests/test_curvature.py::test_on_the_inputs_device_equals_the_cpu 2>&1 | tee "$OUT/test_device.txt"
python3 benchmarks/bench_metrics.py --device cuda --repeats 5 2>&1 | tee "$OUT/bench_metrics_cuda.txt"
python3 benchmarks/bench_curvature.py --device cuda --repeats 3 2>&1 \
  | tee "$OUT/bench_curvature_cuda.txt"
python3 -m nclab run deep-ln --preset rn1-ce-quick --set device=cuda --out "$OUT/deep-ln" \
  --json > "$OUT/deep_ln.json"
python3 -c "import json; s = json.load(open('$OUT/deep_ln.json')); print('deep-ln on cuda:',
{k: s['trend'][k] for k in ('nc1_ratio', 'nc2_ratio', 'objective_gap_ratio', 'objective_gap_ratio_median')},
'lower bound holds:', s['lower_bound_holds'], 'seconds:', round(s['seconds'], 1))" \
  | tee "$OUT/deep_ln_summary.txt"
python3 -m nclab run feature-collapse --preset no-wd-fig3 --set device=cuda --set train.epochs=200 \
  --set log_every=100 --set checkpoint_every=100 --out "$OUT/fc-no-wd" --json > "$OUT/fc_no_wd.json"
python3 -c "import json; s = json.load(open('$OUT/fc_no_wd.json')); print('feature-collapse',
'no-wd-fig3 on cuda:', s['steps'], 'steps in', round(s['seconds'], 1), 's:',
round(1e3 * s['seconds'] / s['steps'], 3), 'ms a step (measuring included)')" \
  | tee "$OUT/fc_no_wd_summary.txt"
