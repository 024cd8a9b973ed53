#!/usr/bin/env bash
# Distributed training with torchrun, one process per GPU (or per CPU process on hosts without
# CUDA, where mlkd falls back to gloo and CPU DDP by itself).
#   bash tools/dist_train.sh CONFIG GPUS [train.py args]
# Multi-node: NNODES, NODE_RANK, MASTER_ADDR and PORT from the environment.
set -euo pipefail
if [ $# -lt 2 ]; then
    echo "usage: bash $0 CONFIG GPUS [train.py args]" >&2
    exit 2
fi
CONFIG=$1
GPUS=$2
shift 2
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
    "$DIR/train.py" "$CONFIG" --launcher pytorch "$@"
