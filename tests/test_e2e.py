"""End to end: the README's main command, headless, on the bundled recording.

``gizmos-referee demo --headless`` renders the recording if it is not cached (a few minutes on
two cores, once), then plays every frame through the still-frame gate, the committed YOLO
detector, card identification, the tracker, with the recording's dispenser log coming through a
virtual board on a pseudo-terminal and the real serial driver; ``--camera-only`` plays the
frames alone (no sensor events, nobody pressing the end-of-turn button: turns are inferred from
the table). In both modes the final scores must equal the ground truth, each rule broken on
purpose must be flagged on its turn with its code (and player), and there must be no other
warning.
"""

from __future__ import annotations

import re

import pytest

from referee.app.cli import main
from referee.app.settings import Settings
from vision.training.recording import ensure_recording


@pytest.mark.slow
@pytest.mark.parametrize("mode", [[], ["--camera-only"]], ids=["with the dispenser board", "camera only"])
def test_demo_referees_the_recorded_game_exactly(mode: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    model = Settings.from_env().detector_file()  # as the demo's --model is filled in
    assert model.is_file(), f"the committed detector {model} is missing: the demo cannot run without it"
    recording = ensure_recording()
    status = main(["demo", "--headless", *mode])
    out = capsys.readouterr().out

    # the final scores, as printed, are the ground truth's
    table = out[out.index("Final scores") : out.index("Warnings (")]
    names = recording.names
    truth = [(names[s["seat"]], s["total"]) for s in recording.scores()]
    got = [(m[2], int(m[3])) for m in re.finditer(r"^(\d+)\s+(\S+)\s+(-?\d+)", table, re.M)]
    assert got == truth, out

    # every rule broken on purpose is flagged on its turn, with its code, and nothing else is
    header = re.search(r"^Warnings \((\d+)\)$", out, re.M)
    assert header is not None
    flagged = re.findall(r"^\s+#\d+ turn (\d+) \(round \d+\), (\S+): (\S+)", out, re.M)
    expected = [(str(i["turn"]), names[i["player"]], i["code"]) for i in recording.injections()]
    assert flagged == expected, out
    assert int(header[1]) == len(expected) == 4
    assert "The referee got it right" in out
    assert status == 0
    if mode:
        assert "camera only" in out and ", 0 dispenser events" in out
