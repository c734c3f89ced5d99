#!/usr/bin/env bash
# One-step setup from a fresh clone: a virtual environment in .venv with everything the
# referee, its training and its tests need. Safe to run again (it only adds what is missing).
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv"
    "$PY" -m venv .venv
fi
VPIP=".venv/bin/python -m pip"

# torchvision publishes no CPU-only wheel; its wheel only loads against the matching full torch
# build, so both come from the package index together (the CPU-only torch wheel cannot load it).
if ! .venv/bin/python -c "import torchvision.ops" >/dev/null 2>&1; then
    echo "setup: installing torch 2.13.0 + torchvision 0.28.0 (first time only; large download)"
    $VPIP install --isolated --quiet --disable-pip-version-check "torch==2.13.0" "torchvision==0.28.0"
fi

echo "setup: installing gizmos-referee and its dependencies"
$VPIP install --quiet --disable-pip-version-check -e ".[train,dev]"

# Keep ultralytics off the network for good: no hub, no font or AMP-check downloads, no telemetry.
.venv/bin/python -m vision.training.offline --configure >/dev/null 2>&1 || true

if [ "${GIZMOS_SETUP_BROWSER:-1}" = "1" ] && ! command -v chromium >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = "0" ]; then
        echo "setup: installing Debian chromium + chromium-driver for the browser test"
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver) \
            >/dev/null 2>&1 || echo "setup: warning: could not install chromium; the browser test will say so"
    fi
fi
echo "setup: done"
