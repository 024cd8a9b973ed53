#!/usr/bin/env bash
# Training on a slurm cluster: one task per GPU.
#   [GPUS=8 GPUS_PER_NODE=8 CPUS_PER_TASK=5 SRUN_ARGS=...] bash tools/slurm_train.sh PARTITION JOB CONFIG WORK_DIR [train.py args]
set -euo pipefail
usage="usage: bash $0 PARTITION JOB_NAME CONFIG WORK_DIR [train.py args]"
[ $# -ge 4 ] || { echo "$usage" >&2; exit 2; }
DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# slurm_run.sh SCRIPT PARTITION JOB_NAME SCRIPT_ARGS...: CONFIG, the work dir, the user's args.
exec bash "$DIR/slurm_run.sh" "$DIR/train.py" "$1" "$2" "$3" --work-dir="$4" "${@:5}"
