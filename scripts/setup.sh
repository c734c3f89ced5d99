#!/usr/bin/env bash
# One-step setup from a fresh clone; safe to run again (it only adds what is missing and puts
# back any package whose version differs from scripts/constraints.txt).
#
#   scripts/setup.sh          what the running referee needs (demo, run, serve, the engine CLI):
#                             .venv with numpy, OpenCV, OpenVINO, Flask, pyserial, PyYAML, paho-mqtt,
#                             cryptography (the HTTPS certificate of the phone camera page). No torch.
#   scripts/setup.sh --dev    everything: the above, plus torch/torchvision and ultralytics for
#                             training, and pytest, hypothesis, ruff, selenium (+ chromium),
#                             mosquitto, postgresql + psycopg for the tests. The README's test
#                             command and CI (.ci/run) use this.
set -euo pipefail
cd "$(dirname "$0")/.."

MODE=runtime
for arg in "$@"; do
    case "$arg" in
        --dev) MODE=dev ;;
        -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "setup: unknown option '$arg' (expected --dev or nothing)" >&2; exit 2 ;;
    esac
done

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv"
    "$PY" -m venv .venv
fi
# Every install takes the tested versions (scripts/constraints.txt): a registry's newer release
# cannot change what the models, the drawn faces and the tests were made with.
VPIP=".venv/bin/python -m pip"
PIN="-c scripts/constraints.txt"

if [ "$MODE" = runtime ]; then
    echo "setup: installing gizmos-referee and what it needs to run (no training stack)"
    $VPIP install --quiet --disable-pip-version-check $PIN -e .
    echo "setup: done (for training and the tests: scripts/setup.sh --dev)"
    exit 0
fi

# torchvision publishes no CPU-only wheel; its wheel only loads against the matching full torch
# build, so both come from the package index together (the CPU-only torch wheel cannot load it).
if ! .venv/bin/python -c "import torchvision.ops" >/dev/null 2>&1; then
    echo "setup: installing torch 2.13.0 + torchvision 0.28.0 (first time only; large download)"
    $VPIP install --isolated --quiet --disable-pip-version-check $PIN "torch==2.13.0" "torchvision==0.28.0"
fi

echo "setup: installing gizmos-referee with its training and test dependencies"
$VPIP install --quiet --disable-pip-version-check $PIN -e ".[train,dev]"

# Keep ultralytics off the network for good: no hub, no font or AMP-check downloads, no telemetry.
.venv/bin/python -m vision.training.offline --configure >/dev/null 2>&1 || true

if [ "${GIZMOS_SETUP_BROWSER:-1}" = "1" ] && ! command -v chromium >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = "0" ]; then
        echo "setup: installing Debian chromium + chromium-driver for the browser test"
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver) \
            >/dev/null 2>&1 || echo "setup: warning: could not install chromium; the browser test will say so"
    fi
fi
if [ "${GIZMOS_SETUP_BROKER:-1}" = "1" ] && ! command -v mosquitto >/dev/null 2>&1 && [ ! -x /usr/sbin/mosquitto ]; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = "0" ]; then
        echo "setup: installing Debian mosquitto (the MQTT broker of tournaments: gizmos-referee hub)"
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mosquitto) \
            >/dev/null 2>&1 || echo "setup: warning: could not install mosquitto; the tournament tests will say so"
    fi
fi
if [ "${GIZMOS_SETUP_POSTGRES:-1}" = "1" ] && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 \
        && ! command -v initdb >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = "0" ]; then
        # The server's programs only (the tests start their own throw-away server as the
        # postgres user); the package's own cluster service is not started here.
        echo "setup: installing Debian postgresql (the tournament hub's store tests: hub --store postgresql://)"
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql) \
            >/dev/null 2>&1 || echo "setup: warning: could not install postgresql; the PostgreSQL store tests will say so"
    fi
fi
if [ "${GIZMOS_SETUP_POVRAY:-1}" = "1" ] && ! command -v povray >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = "0" ]; then
        echo "setup: installing Debian povray (the vision benchmark's ray-traced tables: benchmarks/raytrace.py)"
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq povray) \
            >/dev/null 2>&1 || echo "setup: warning: could not install povray; the ray-tracing tests will say so"
    fi
fi
echo "setup: done"
