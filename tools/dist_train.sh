#!/usr/bin/env bash
# Distributed training with torchrun (see dist_run.sh; CPU-only hosts use gloo + CPU DDP).
#   bash tools/dist_train.sh CONFIG GPUS [train.py args]
# Multi-node: NNODES, NODE_RANK, MASTER_ADDR and PORT from the environment.
set -euo pipefail
if [ $# -lt 2 ]; then
    echo "usage: bash $0 CONFIG GPUS [train.py args]" >&2
    exit 2
fi
DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CONFIG=$1
GPUS=$2
shift 2
exec bash "$DIR/dist_run.sh" "$DIR/train.py" "$GPUS" "$CONFIG" "$@"
