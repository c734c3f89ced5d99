"""Where the referee's files live: the committed models, rendered data and training runs,
resolved in this one place from one root folder.

The application passes its root in (:meth:`referee.app.settings.Settings.locations`:
``$GIZMOS_HOME``, else :func:`find_root`); vision's own defaults (a :class:`vision.detect.Detector`
given no file, the recording's cache) are those of :data:`LOCATIONS`, found the same way.

The models ship in the project's ``models/`` folder, beside the packages rather than inside one,
so the root is looked for, not assumed at a fixed depth: the nearest folder holding ``models/``
and ``pyproject.toml``, from these packages up (a clone, and the editable install of
``scripts/setup.sh``, which imports the packages from the clone), else from the current folder up
(a copy installed into a virtual environment's site-packages, run from the clone).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Locations:
    """The project's folders under one root."""

    root: Path

    @property
    def models(self) -> Path:
        """The committed networks: detector.onnx / detector.pt, hands.onnx, tokens.onnx,
        workbench.onnx, damage.onnx; and the own tiles' faces, workbench_tiles.npz."""
        return self.root / "models"

    @property
    def data(self) -> Path:
        """Rendered data: the demo's recordings, datasets."""
        return self.root / "data"

    @property
    def runs(self) -> Path:
        """Where training and fine-tuning write their runs."""
        return self.root / "runs"

    @property
    def detector(self) -> Path:
        return self.models / "detector.onnx"

    @property
    def hands(self) -> Path:
        return self.models / "hands.onnx"

    @property
    def tokens(self) -> Path:
        """The VP-token reader (vision.tokens.TokenReader)."""
        return self.models / "tokens.onnx"

    @property
    def workbench(self) -> Path:
        return self.models / "workbench.onnx"

    @property
    def damage(self) -> Path:
        return self.models / "damage.onnx"

    @property
    def workbench_tiles(self) -> Path:
        """The project's own Component tiles' faces, which the Workbench reader compares crops
        with (vision.tile_faces)."""
        return self.models / "workbench_tiles.npz"


def is_root(folder: Path) -> bool:
    """Whether ``folder`` is the project's root: it holds ``models/`` and ``pyproject.toml``."""
    return (folder / "models").is_dir() and (folder / "pyproject.toml").is_file()


def find_root(cwd: Path | None = None) -> Path:
    """The project's root: the nearest root from these packages up, else from ``cwd`` (default
    the current folder) up, else ``cwd`` itself (then the model files are missing, and whoever
    needs one says so naming it)."""
    cwd = Path.cwd() if cwd is None else cwd
    for start in (Path(__file__).resolve(), cwd.resolve()):
        for folder in start.parents if start.is_file() else (start, *start.parents):
            if is_root(folder):
                return folder
    return cwd


def source_file(module: str) -> Path:
    """A module's source file, wherever it is imported from (a clone or site-packages): the
    rendered recordings' cache keys hash the code they depend on."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(f"no source file for module {module}")
    return Path(spec.origin)


#: The default locations (vision's defaults; the application's unless ``$GIZMOS_HOME`` is set).
LOCATIONS = Locations(find_root())
