#!/usr/bin/env bash
# Distributed evaluation with torchrun (see dist_run.sh; CPU-only hosts use gloo).
#   bash tools/dist_test.sh CONFIG CHECKPOINT GPUS [test.py args]
# Multi-node: NNODES, NODE_RANK, MASTER_ADDR and PORT from the environment.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: bash $0 CONFIG CHECKPOINT GPUS [test.py args]" >&2; exit 2; }
DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# dist_run.sh SCRIPT GPUS SCRIPT_ARGS...: CONFIG CHECKPOINT, then the user's test.py arguments.
exec bash "$DIR/dist_run.sh" "$DIR/test.py" "$3" "$1" "$2" "${@:4}"
