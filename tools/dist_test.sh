#!/usr/bin/env bash
# Distributed evaluation with torchrun (see dist_run.sh; CPU-only hosts use gloo).
#   bash tools/dist_test.sh CONFIG CHECKPOINT GPUS [test.py args]
# Multi-node: NNODES, NODE_RANK, MASTER_ADDR and PORT from the environment.
set -euo pipefail
if [ $# -lt 3 ]; then
    echo "usage: bash $0 CONFIG CHECKPOINT GPUS [test.py args]" >&2
    exit 2
fi
DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CONFIG=$1
CHECKPOINT=$2
GPUS=$3
shift 3
exec bash "$DIR/dist_run.sh" "$DIR/test.py" "$GPUS" "$CONFIG" "$CHECKPOINT" "$@"
