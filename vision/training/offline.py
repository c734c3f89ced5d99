"""Keep ultralytics off the network: import this module before ``ultralytics``.

ultralytics otherwise tries to sync settings, reach the hub, download fonts for plots and a
``yolo11n.pt`` for its AMP check. None of that may happen here, so the environment and the
persistent settings are fixed before the first import. ``python -m vision.training.offline --configure``
writes the settings once (the setup script calls it).
"""

from __future__ import annotations

import os
import sys

ENV: dict[str, str] = {
    "YOLO_OFFLINE": "1",
    "ULTRALYTICS_HUB": "0",
    "HUB_API_KEY": "",
    "WANDB_MODE": "disabled",
    "COMET_MODE": "disabled",
    "MLFLOW_TRACKING_URI": "",
}

SETTINGS: dict[str, object] = {
    "sync": False,
    "clearml": False,
    "comet": False,
    "dvc": False,
    "mlflow": False,
    "raytune": False,
    "tensorboard": False,
    "wandb": False,
    "vscode_msg": False,
    "openvino_msg": False,
}


def apply_env() -> None:
    """Set the offline environment variables (idempotent; keeps values already set by the user)."""
    for key, value in ENV.items():
        os.environ.setdefault(key, value)


def configure() -> dict[str, object]:
    """Write the offline settings into ultralytics' settings file and return them."""
    apply_env()
    from ultralytics.utils import SETTINGS as ULTRA_SETTINGS

    ULTRA_SETTINGS.update(SETTINGS)
    return {k: ULTRA_SETTINGS.get(k) for k in SETTINGS}


def import_ultralytics():
    """Import ultralytics with the offline environment and settings in force."""
    configure()
    import ultralytics

    return ultralytics


apply_env()


def main(argv: list[str] | None = None) -> int:
    """``--configure``: persist the offline settings and print them."""
    args = sys.argv[1:] if argv is None else argv
    if args != ["--configure"]:
        print("usage: python -m vision.training.offline --configure", file=sys.stderr)
        return 2
    for key, value in configure().items():
        print(f"{key}={value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
