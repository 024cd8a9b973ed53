#!/usr/bin/env bash
# Distributed training with torchrun (see dist_run.sh; CPU-only hosts use gloo + CPU DDP).
#   bash tools/dist_train.sh CONFIG GPUS [train.py args]
# Multi-node: NNODES, NODE_RANK, MASTER_ADDR and PORT from the environment.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: bash $0 CONFIG GPUS [train.py args]" >&2; exit 2; }
DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# dist_run.sh SCRIPT GPUS SCRIPT_ARGS...: CONFIG, then the user's train.py arguments.
exec bash "$DIR/dist_run.sh" "$DIR/train.py" "$2" "$1" "${@:3}"
