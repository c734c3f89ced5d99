"""Our schema validator and OpenAPI generator (web/schemas.py) against what a library would give.

Measured on the body of ``POST /api/games`` (names, deal, seed) and the whole document:

1. Validation, per call (median of 2000, microseconds): ``web.schemas.validate`` on a valid
   body and on a bad one, and the same with a pydantic model of the same fields (strict types,
   extra fields forbidden), if pydantic can be imported.
2. The error each gives for the bad bodies the API tests require a clear message for.
3. Building the whole OpenAPI document from the app's routes (ours), and the import time of
   ``web.schemas`` against ``pydantic`` / ``apispec`` / ``flask_smorest``.

The libraries are not dependencies of the project. To measure them, install them aside:
``.venv/bin/python -m pip install --target /tmp/apimeasure pydantic apispec flask-smorest`` and run
``PYTHONPATH=/tmp/apimeasure .venv/bin/python benchmarks/openapi_libraries.py`` (the venv's own
Flask is found first). Without them the library rows say "not installed".

Usage: .venv/bin/python benchmarks/openapi_libraries.py
"""

from __future__ import annotations

import importlib
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from web.api_schemas import NEW_GAME  # noqa: E402
from web.schemas import SchemaError, validate  # noqa: E402

GOOD = {"names": ["Ana", "Ben", "Chloé"], "deal": True, "seed": 4}
BAD = [
    {"names": ["Ana"]},
    {"names": ["Ana", 7]},
    {"names": ["Ana", "Ben"], "deal": "yes"},
    {"names": ["Ana", "Ben"], "seed": -1},
    {"names": ["Ana", "Ben"], "colour": "red"},
]


def per_call_us(fn: Any, arg: Any, n: int = 2000) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn(arg)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def ours(data: Any) -> str:
    try:
        validate(NEW_GAME, data, "game")
        return "ok"
    except SchemaError as exc:
        return str(exc)


def import_ms(module: str) -> str:
    code = f"import time; t=time.perf_counter(); import {module}; print((time.perf_counter()-t)*1000)"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False)
    return f"{float(run.stdout):.0f} ms" if run.returncode == 0 else "not installed"


def main() -> None:
    print("validation of the POST /api/games body, median per call")
    good, bad = per_call_us(ours, GOOD), per_call_us(ours, BAD[1])
    print(f"  web.schemas.validate  valid {good:6.1f} us   bad {bad:6.1f} us")
    pydantic: Any  # not a dependency of the project: imported by name, when it is installed
    try:
        pydantic = importlib.import_module("pydantic")
    except ImportError:
        pydantic = None
        print("  pydantic              not installed")
    model = None
    if pydantic is not None:
        from typing import Annotated

        class NewGame(pydantic.BaseModel):
            model_config = pydantic.ConfigDict(extra="forbid", strict=True)
            names: Annotated[list[str], pydantic.Field(min_length=2, max_length=4)]
            deal: bool = False
            seed: Annotated[int, pydantic.Field(ge=0, le=2**63 - 1)] | None = None

        model = NewGame

        def theirs(data: Any) -> str:
            try:
                model.model_validate(data)
                return "ok"
            except pydantic.ValidationError as exc:
                e = exc.errors()[0]
                return f"{'.'.join(str(x) for x in e['loc'])}: {e['msg']}"

        print(
            f"  pydantic {pydantic.VERSION:<12} valid {per_call_us(theirs, GOOD):6.1f} us   "
            f"bad {per_call_us(theirs, BAD[1]):6.1f} us"
        )
    print("\nthe message for each bad body")
    for body in BAD:
        print(f"  {body}")
        print(f"    ours:     {ours(body)}")
        if model is not None:
            print(f"    pydantic: {theirs(body)}")
    from tests.web_testing import make_app
    from web.schemas import openapi_document

    app = make_app("/tmp/openapi-bench-games")
    t0 = time.perf_counter()
    doc = openapi_document(app)
    built = (time.perf_counter() - t0) * 1000
    ops = [(p, m) for p, item in doc["paths"].items() for m in item if m in ("get", "post", "put")]
    print(f"\nthe whole document: {len(ops)} operations built from the routes' specs in {built:.1f} ms")
    print("\nimport time (a fresh interpreter)")
    print("  (web.schemas brings in Flask and, through web.errors, the dashboard and the engine)")
    for module in ("flask", "web.schemas", "pydantic", "apispec", "flask_smorest"):
        print(f"  {module:<14} {import_ms(module)}")


if __name__ == "__main__":
    main()
