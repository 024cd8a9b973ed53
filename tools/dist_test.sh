#!/usr/bin/env bash
# Distributed evaluation with torchrun, one process per GPU (or per CPU process on hosts without
# CUDA, where mlkd falls back to gloo and CPU DDP by itself).
#   bash tools/dist_test.sh CONFIG CHECKPOINT GPUS [test.py args]
# Multi-node: NNODES, NODE_RANK, MASTER_ADDR and PORT from the environment.
set -euo pipefail
if [ $# -lt 3 ]; then
    echo "usage: bash $0 CONFIG CHECKPOINT GPUS [test.py args]" >&2
    exit 2
fi
CONFIG=$1
CHECKPOINT=$2
GPUS=$3
shift 3
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
PORT=${PORT:-29500}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

PYTHONPATH="$DIR/..${PYTHONPATH:+:$PYTHONPATH}" \
python -m torch.distributed.run \
    --nnodes="$NNODES" \
    --node_rank="$NODE_RANK" \
    --master_addr="$MASTER_ADDR" \
    --nproc_per_node="$GPUS" \
    --master_port="$PORT" \
    "$DIR/test.py" "$CONFIG" "$CHECKPOINT" --launcher pytorch "$@"
