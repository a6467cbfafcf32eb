# Sourced by ./nclab and ./test: make sure the project virtual environment exists and is current.
# - Python >= 3.11 is required (set PYTHON=... to choose the interpreter).
# - If that Python already has torch, the venv sees it (--system-site-packages) and keeps it.
# - Otherwise torch==2.13.0 is installed first (a CPU wheel on the project machines), so that the
#   package's torch>=2.1 requirement is already satisfied and nothing pulls a multi-GB CUDA build.
set -euo pipefail
NCLAB_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${NCLAB_VENV:-$NCLAB_ROOT/.venv}"
_py="${PYTHON:-python3}"
_log() { echo "[nclab bootstrap] $*" >&2; }

if [ ! -x "$VENV/bin/python" ]; then
  if ! "$_py" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "nclab needs Python >= 3.11; '$_py' is $("$_py" --version 2>&1). Set PYTHON=/path/to/python3.11" >&2
    exit 2
  fi
  if "$_py" -c 'import torch' 2>/dev/null; then
    _log "creating $VENV (keeping the torch already installed: $("$_py" -c 'import torch; print(torch.__version__)'))"
    "$_py" -m venv --system-site-packages "$VENV"
  else
    _log "creating $VENV and installing torch==2.13.0"
    "$_py" -m venv "$VENV"
    # numpy with torch: torch imported without numpy warns "Failed to initialize NumPy"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check "torch==2.13.0" "numpy>=1.24" 2>&1 \
      | grep -v "is ignored: it is neither a file nor a directory" >&2 || true
    "$VENV/bin/python" -c 'import torch' || { echo "installing torch==2.13.0 failed" >&2; exit 1; }
  fi
fi
_stamp="$VENV/.nclab-installed"
if [ ! -f "$_stamp" ] || [ "$NCLAB_ROOT/pyproject.toml" -nt "$_stamp" ]; then
  _log "installing nclab and its test tools into $VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e "$NCLAB_ROOT[dev]" 2>&1 \
    | grep -v "is ignored: it is neither a file nor a directory" >&2 || true
  "$VENV/bin/python" -c 'import nclab' && touch "$_stamp"
fi
