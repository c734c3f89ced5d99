#!/usr/bin/env bash
# Domain-randomised fine-tune of the detector (issue 14, item 1), sized for one shared CPU core:
# render a randomised tile set and a share of the project's own-style scenes (so the fine-tune
# does not forget the look it must keep), then fine-tune $BASE on both together.
#
# Resumable at every step: finished scenes are skipped, and an interrupted training run continues
# from its last epoch checkpoint (ultralytics saves runs/$NAME/weights/last.pt after every epoch).
# Nothing is downloaded; the benchmark's held-out style (benchmarks/heldout.py) is never used:
# vision/training/randomise.py keeps clear of it (tests/test_vision_randomise.py), and every
# seed range here lies below the benchmark's 9,000,000 (vision/training/dataset.py refuses more).
#
#   scripts/train_random.sh                     # start, or continue where it stopped
#   tail -f runs/logs/train-random.log          # progress (per scene, then per batch and epoch)
#   TRAIN=4000 VAL=200 OWN=1200 EPOCHS=40 scripts/train_random.sh   # the full recipe of docs/vision.md
#   DATA=/elsewhere/random OWN_DATA=/elsewhere/own scripts/train_random.sh   # data outside the repo
#
# When it ends: runs/$NAME/weights/best.pt; evaluate with
#   .venv/bin/python -m referee.app.cli vision export --weights runs/$NAME/weights/best.pt --out runs/$NAME/export
#   .venv/bin/python benchmarks/vision.py --model runs/$NAME/export/detector.onnx --conditions all
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
TRAIN=${TRAIN:-800}          # randomised training scenes (3 tiles of 384 px each)
VAL=${VAL:-20}               # randomised validation scenes
OWN=${OWN:-0}                # own-style training scenes mixed in (the normal renderer, no --randomise)
OWN_VAL=${OWN_VAL:-10}       # own-style validation scenes (when OWN > 0)
EPOCHS=${EPOCHS:-4}
THREADS=${THREADS:-1}        # torch threads: one core of the shared machine
LR0=${LR0:-0.001}
NAME=${NAME:-random-ft}
DATA=${DATA:-data/random}
OWN_DATA=${OWN_DATA:-data/own-mix}
BASE=${BASE:-models/detector.pt}
SEED_OFFSET=${SEED_OFFSET:-100000}       # seeds 1,100,000+ (train) and 2,100,000+ (val): the recipe's
OWN_SEED_OFFSET=${OWN_SEED_OFFSET:-700000}  # seeds 1,700,000+ / 2,700,000+: no other set uses them
LOOK=${LOOK:-2}              # the randomiser's look (vision/training/randomise.py; 1: the first round's)

mkdir -p runs/logs
log=runs/logs/train-random.log
{
  echo "train_random: $(date -u +%FT%TZ) TRAIN=$TRAIN VAL=$VAL LOOK=$LOOK OWN=$OWN EPOCHS=$EPOCHS THREADS=$THREADS LR0=$LR0 BASE=$BASE"
  nice -n 19 "$PY" -m referee.app.cli vision dataset --randomise "$LOOK" --out "$DATA" --train "$TRAIN" \
    --val "$VAL" --seed-offset "$SEED_OFFSET" --workers 1
  yaml="$DATA/gizmos.yaml"
  if [ "$OWN" -gt 0 ]; then
    nice -n 19 "$PY" -m referee.app.cli vision dataset --out "$OWN_DATA" --train "$OWN" \
      --val "$OWN_VAL" --seed-offset "$OWN_SEED_OFFSET" --workers 1
    yaml="$DATA/mix.yaml"
    "$PY" -m referee.app.cli vision dataset-mix --out "$yaml" "$DATA" "$OWN_DATA"
  fi
  last=runs/$NAME/weights/last.pt
  if [ -f "$last" ] && "$PY" -c "
import sys, torch
c = torch.load(sys.argv[1], map_location='cpu', weights_only=False)
sys.exit(0 if c.get('optimizer') is not None and c.get('epoch', -1) >= 0 else 1)" "$last"; then
    echo "train_random: resuming $last"
    nice -n 19 "$PY" -m referee.app.cli vision train --resume --name "$NAME" --threads "$THREADS"
  elif [ -f "$last" ]; then
    echo "train_random: the run in runs/$NAME has finished (best: runs/$NAME/weights/best.pt)"
  else
    nice -n 19 "$PY" -m referee.app.cli vision train --from "$BASE" --data "$yaml" \
      --imgsz 384 --epochs "$EPOCHS" --batch 16 --lr0 "$LR0" --threads "$THREADS" --name "$NAME"
  fi
  echo "train_random: done $(date -u +%FT%TZ)"
} >>"$log" 2>&1
