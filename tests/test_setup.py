"""Setting up: the README's two commands, what CI runs, and a referee that runs without torch."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
TRAINING = ("torch", "torchvision", "ultralytics", "onnx", "onnxruntime")


def _name(requirement: str) -> str:
    """A requirement's distribution name, normalised as pip compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", re.split(r"[<>=!~\[ ;]", requirement.strip(), maxsplit=1)[0]).lower()


def _commands() -> list[str]:
    section = README.split("## The two commands", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)\n```", section, flags=re.S)


def test_the_readme_commands_and_ci_agree() -> None:
    main, tests = _commands()
    assert main == "scripts/setup.sh && .venv/bin/gizmos-referee demo"  # runtime only
    assert tests == "scripts/setup.sh --dev && .venv/bin/python -m pytest -q"  # everything
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert ci == tests


def test_the_runtime_install_has_no_training_stack() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = {_name(d) for d in project["dependencies"]}
    assert not names & set(TRAINING), names
    assert {"torch", "ultralytics"} <= {_name(d) for d in project["optional-dependencies"]["train"]}
    script = (ROOT / "scripts" / "setup.sh").read_text(encoding="utf-8")
    runtime = script.split('if [ "$MODE" = runtime ]; then', 1)[1].split("fi", 1)[0]
    assert "-e .\n" in runtime and "torch" not in runtime and "[train" not in runtime


def test_what_the_running_referee_imports_needs_no_training_stack() -> None:
    # Every module the demo, run, serve and the engine CLI load, with the training packages made
    # impossible to import: the runtime install (scripts/setup.sh without --dev) must be enough.
    blocker = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name.split('.')[0] in {TRAINING!r}:\n"
        "            raise ImportError(f'{name} is a training package')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import referee.app.cli, referee.app.demo, referee.app.live, vision.detect, vision.observe\n"
        "import referee.app.sources, referee.app.dispenser, referee.app.pipeline, referee.app.dashboard\n"
        "import referee.app.run_cli, referee.app.summary\n"
        "import vision.training.recording\n"
        "import hardware.cli, web.app, web.serve\n"
        "from referee.app.cli import main\n"
        "raise SystemExit(main(['demo', '--help']))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", blocker], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "demo" in proc.stdout


def _locked() -> dict[str, str]:
    lines = (ROOT / "scripts" / "constraints.txt").read_text(encoding="utf-8").splitlines()
    pins = [line.split("==") for line in lines if line.strip() and not line.startswith("#")]
    assert all(len(pin) == 2 for pin in pins), "every line of scripts/constraints.txt is name==version"
    return {_name(name): version for name, version in pins}


def test_every_install_takes_the_locked_versions() -> None:
    script = (ROOT / "scripts" / "setup.sh").read_text(encoding="utf-8")
    installs = [line for line in script.splitlines() if "$VPIP install" in line]
    assert len(installs) == 3 and all("$PIN" in line for line in installs), installs
    assert 'PIN="-c scripts/constraints.txt"' in script
    locked = _locked()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"].values()
    declared = list(project["dependencies"]) + [d for ds in extras for d in ds]
    unpinned = {_name(d) for d in declared} - set(locked)
    assert not unpinned, f"dependencies scripts/constraints.txt does not pin: {sorted(unpinned)}"
    assert locked["torch"] == "2.13.0" and locked["torchvision"] == "0.28.0"  # what setup.sh names


def test_this_environment_is_the_locked_one() -> None:
    # The exactness tests (committed drawn faces, frames that calibrate only one way) hold for the
    # locked versions; a package upgraded by hand says so here, by name, rather than there.
    from importlib.metadata import PackageNotFoundError, version

    drifted = []
    for name, pinned in _locked().items():
        try:
            installed = version(name)
        except PackageNotFoundError:
            continue  # not part of this install (the runtime one, another platform's wheels)
        if installed != pinned:
            drifted.append(f"{name} {installed} (scripts/constraints.txt: {pinned})")
    assert not drifted, "run scripts/setup.sh --dev to put back: " + ", ".join(drifted)
