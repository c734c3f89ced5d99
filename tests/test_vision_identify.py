"""Identification of full faces and stacked top bands, from the rendered camera frame."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from vision.faces import face_set
from vision.identify import Identifier
from vision.training.synth import PlayerLayout, RenderSettings, TableLayout, random_layout, render_table
from vision.zones import default_zones


def _rotation(center_y: float) -> int:
    """Cards in the top seats' areas face the other way."""
    top = max(s.gizmos[1] + s.gizmos[3] for s in default_zones().seats if s.rotation == 180)
    return 180 if center_y < top else 0


def _accuracy(identifier: Identifier, scenes: list) -> dict[str, tuple[int, int]]:
    got = {"card": [0, 0], "card_band": [0, 0]}
    for scene in scenes:
        for o in scene.objects:
            if o.cls not in got:
                continue
            c = ((o.box_mm[0] + o.box_mm[2]) / 2, (o.box_mm[1] + o.box_mm[3]) / 2)
            ident = identifier.identify_card if o.cls == "card" else identifier.identify_band
            m = ident(scene.image, scene.homography, c, _rotation(c[1]))
            got[o.cls][0] += m.card == o.card
            got[o.cls][1] += 1
    return {k: (v[0], v[1]) for k, v in got.items()}


def test_full_faces_and_top_bands_are_identified() -> None:
    rng = np.random.default_rng(31)
    scenes = [
        render_table(
            random_layout(rng, 4),
            31 + i,
            RenderSettings(size=[(1280, 720), (1920, 1080)][i % 2], hand_prob=0),
        )
        for i in range(3)
    ]
    acc = _accuracy(Identifier(), scenes)
    full, band = acc["card"], acc["card_band"]
    assert full[1] > 40 and band[1] > 15
    assert full[0] / full[1] >= 0.97, acc
    assert band[0] / band[1] >= 0.95, acc


def test_identical_starting_gizmos_are_told_apart_by_their_code() -> None:
    layout = TableLayout(
        display=(),
        energy_row=(),
        players=tuple(PlayerLayout(s, columns=((), (), (s,), (), ())) for s in range(4)),
    )
    scene = render_table(layout, 7, RenderSettings(hand_prob=0))
    acc = _accuracy(Identifier(), [scene])
    assert acc["card"] == (4, 4)


def test_enrolled_faces_are_used_for_identification(tmp_path: Path) -> None:
    # A "photo" of card 15 that looks nothing like its drawn face.
    photo = np.full((352, 252, 3), (200, 40, 160), np.uint8)
    cv2.putText(photo, "15", (40, 200), cv2.FONT_HERSHEY_DUPLEX, 4, (255, 255, 255), 8)
    cv2.rectangle(photo, (0, 0), (251, 80), (0, 255, 255), -1)
    cv2.imwrite(str(tmp_path / "15.png"), photo)
    faces = face_set(tmp_path)
    layout = TableLayout(display=((1, 0, 15), (1, 1, 16)), energy_row=(), players=())
    scene = render_table(layout, 8, RenderSettings(hand_prob=0), faces=faces)
    enrolled = _accuracy(Identifier(faces=faces), [scene])
    assert enrolled["card"] == (2, 2)
    drawn = _accuracy(Identifier(), [scene])
    assert drawn["card"][0] < 2  # the drawn reference for 15 no longer matches what is on the table
