"""Identification of full faces and stacked top bands, from the rendered camera frame."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.faces import BAND_MM, CARD_MM, FACE_H, FACE_PX_PER_MM, FACE_W, N_CARDS, face_set
from vision.geometry import table_patch
from vision.identify import (
    LEVELS,
    Identifier,
    _box_sums,
    _Matches,
    _normalise,
    apply_color_map,
    color_map,
    level_cards,
)
from vision.training.randomise import random_deck
from vision.training.synth import (
    PlayerLayout,
    RenderedScene,
    RenderSettings,
    TableLayout,
    random_layout,
    render_table,
)
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


def test_enrolling_during_play_replaces_the_references_a_candidate_mask_scored() -> None:
    # The references a mask allows are kept between frames (Identifier._among); a card enrolled
    # meanwhile must be scored with its new reference under the same mask.
    photo = np.full((352, 252, 3), (200, 40, 160), np.uint8)
    cv2.putText(photo, "15", (40, 200), cv2.FONT_HERSHEY_DUPLEX, 4, (255, 255, 255), 8)
    cv2.rectangle(photo, (0, 0), (251, 80), (0, 255, 255), -1)
    faces = list(face_set())
    faces[15] = cv2.resize(photo, (faces[15].shape[1], faces[15].shape[0]))
    layout = TableLayout(display=((1, 0, 15),), energy_row=(), players=())
    scene = render_table(layout, 8, RenderSettings(hand_prob=0), faces=tuple(faces))
    o = next(o for o in scene.objects if o.cls == "card")
    c = ((o.box_mm[0] + o.box_mm[2]) / 2, (o.box_mm[1] + o.box_mm[3]) / 2)
    identifier, level1 = Identifier(), level_cards(1)
    before = identifier.card_scores(scene.image, scene.homography, c, 0, level1)
    identifier.enrol(15, photo)
    after = identifier.card_scores(scene.image, scene.homography, c, 0, level1)
    assert int(np.argmax(after)) == 15 and after[15] > before[15] + 0.3
    assert np.array_equal(np.isfinite(after), level1)  # still only the mask's cards scored


def test_windows_are_every_shift_of_the_patch_normalised() -> None:
    rng = np.random.default_rng(3)
    identifier = Identifier()
    for patch in (rng.random((9, 12, 3), np.float32) * 255, rng.random((9, 12), np.float32) * 255):
        got = identifier._windows(patch.copy(), 10, 6)  # tw x th: 3 x 4 shifts
        slices = [patch[y : y + 6, x : x + 10].reshape(-1) for y in range(4) for x in range(3)]
        assert np.array_equal(got, _normalise(np.array(slices)))


def test_box_sums_are_each_windows_sum_and_sum_of_squares() -> None:
    rng = np.random.default_rng(4)
    for img in (rng.random((9, 12, 3), np.float32) * 255, rng.random((9, 12), np.float32) * 255):
        s1, s2 = _box_sums(img, 10, 6)
        slices = [img[y : y + 6, x : x + 10].astype(np.float64) for y in range(4) for x in range(3)]
        assert np.allclose(s1, [w.sum() for w in slices], rtol=1e-12)
        assert np.allclose(s2, [(w * w).sum() for w in slices], rtol=1e-12)


def _shift_patches(rng: np.random.Generator, identifier: Identifier) -> list[tuple[np.ndarray, int, int]]:
    """Patches as the matcher gets them: a real band part and a whole card from a rendered table,
    and random ones of every layout (a band part is a column slice of the band's patch)."""
    scene = render_table(random_layout(np.random.default_rng(9), 2), 9, RenderSettings(hand_prob=0))
    o = next(o for o in scene.objects if o.cls == "card")
    c = ((o.box_mm[0] + o.box_mm[2]) / 2, (o.box_mm[1] + o.box_mm[3]) / 2)
    tw, th = identifier.full_size
    full = table_patch(scene.image, scene.homography, c, (CARD_MM[0] + 12, CARD_MM[1] + 12), 0.5, 0)
    band = table_patch(scene.image, scene.homography, c, (CARD_MM[0] + 6, BAND_MM + 6), 1.0, 0)
    (x0, x1), bh = identifier.band_cols[1], identifier.band_size[1]
    noisy = rng.random((26, 40, 3), np.float32) * 255
    return [
        (full.astype(np.float32), tw, th),
        (band.astype(np.float32)[:, x0:], x1 - x0, bh),
        (noisy[:, 3:], x1 - x0, bh),
        (noisy[:, :, 0] + 1000.0, x1 - x0, bh),  # one channel, far from zero
    ]


def _shifted(
    identifier: Identifier, patch: np.ndarray, tw: int, th: int, refs: np.ndarray, among: np.ndarray | None
) -> np.ndarray:
    """One patch's shifted-window match through :class:`vision.identify._Matches`, as
    :meth:`Identifier.scores` runs it."""
    matches = _Matches(identifier)
    handle = matches.add(patch, tw, th, refs, among)
    return matches.run()[handle]


def test_shifted_scores_are_the_normalised_windows_correlations() -> None:
    """The matcher's raw-window product gives what normalising every window gives (to rounding)."""
    rng = np.random.default_rng(6)
    identifier = Identifier()
    for patch, tw, th in _shift_patches(rng, identifier):
        d = tw * th * (3 if patch.ndim == 3 else 1)
        refs = _normalise(rng.random((N_CARDS, d), np.float32) * 255)
        if d == identifier.full_refs.shape[1]:
            refs = identifier.full_refs
        for among in (None, level_cards(2), LEVELS >= 0):
            want = identifier._best(identifier._windows(patch, tw, th), refs, among)
            got = _shifted(identifier, patch, tw, th, refs, among)
            assert got.dtype == np.float32
            assert np.array_equal(np.isfinite(got), np.isfinite(want))
            assert np.abs(got[np.isfinite(got)] - want[np.isfinite(want)]).max() < 1e-5


def test_a_patch_with_a_flat_window_is_scored_window_by_window() -> None:
    """A window without contrast (a warp's black border) would show the raw product's rounding:
    such a patch takes the normalised windows, exactly."""
    rng = np.random.default_rng(8)
    identifier = Identifier()
    patch = rng.random((26, 37, 3), np.float32) * 255
    patch[:, :33] = 0.0  # the leftmost windows are all black
    refs = identifier.band_refs[0]
    tw, th = identifier.band_cols[0][1], identifier.band_size[1]
    want = identifier._best(identifier._windows(patch, tw, th), refs, level_cards(1))
    assert np.array_equal(_shifted(identifier, patch, tw, th, refs, level_cards(1)), want)
    blank = np.full_like(patch, 17.0)  # no contrast anywhere
    want = identifier._best(identifier._windows(blank, tw, th), refs, None)
    assert np.array_equal(_shifted(identifier, blank, tw, th, refs, None), want)


def test_a_frames_cards_scored_together_score_as_each_alone() -> None:
    """Identifier.scores matches the windows of many places in one product per reference set
    and mask: each place's scores are what card_scores / band_scores give it alone."""
    scene = render_table(random_layout(np.random.default_rng(12), 4), 12, RenderSettings(hand_prob=0))
    identifier = Identifier()
    places = []
    for i, o in enumerate(o for o in scene.objects if o.cls in ("card", "card_band")):
        c = ((o.box_mm[0] + o.box_mm[2]) / 2, (o.box_mm[1] + o.box_mm[3]) / 2)
        among = (None, level_cards(1), LEVELS > 0)[i % 3]  # shared and distinct masks
        places.append((c, _rotation(c[1]), among, o.cls == "card"))
    assert len(places) > 20 and any(p[3] for p in places) and not all(p[3] for p in places)
    together = identifier.scores(scene.image, scene.homography, places)
    for (c, rotation, among, whole), got in zip(places, together, strict=True):
        alone = (identifier.card_scores if whole else identifier.band_scores)(
            scene.image, scene.homography, c, rotation, among
        )
        assert np.array_equal(np.isfinite(got), np.isfinite(alone))
        assert np.abs(got[np.isfinite(got)] - alone[np.isfinite(alone)]).max() < 1e-5


def _whole_cards(scene) -> list:
    faces = face_set()
    return [
        (((o.box_mm[0] + o.box_mm[2]) / 2, (o.box_mm[1] + o.box_mm[3]) / 2), o.card)
        for o in scene.objects
        if o.cls == "card" and o.visible
    ], faces


def test_color_map_undoes_a_color_cast_from_the_cards_seen_whole() -> None:
    """A cast the references were not taken under is measured on the whole cards and undone."""
    scene = render_table(random_layout(np.random.default_rng(5), 2), 5, RenderSettings(hand_prob=0))
    cards, faces = _whole_cards(scene)
    cast = np.array([[0.8, 0, 0, 10], [0, 1.0, 0, 0], [0, 0, 1.25, -5]], np.float32)  # B, G, R rows
    frame = cv2.transform(scene.image, cast)
    whole = [(c, _rotation(c[1]), faces[card]) for c, card in cards]
    mat = color_map(frame, scene.homography, whole)
    assert mat is not None and len(whole) >= 4
    assert mat[0, 0] > 1.1 and mat[2, 2] < 0.9  # blue raised, red lowered: the cast undone
    mapped = apply_color_map(frame, mat)

    def error(img: np.ndarray) -> float:
        errs = []
        for c, card in cards:
            p = table_patch(img, scene.homography, c, (40.0, 60.0), 0.5, _rotation(c[1])).astype(float)
            ref = cv2.resize(faces[card], (63, 88), interpolation=cv2.INTER_AREA)[14:74, 11:51].astype(float)
            p = cv2.resize(p, (40, 60), interpolation=cv2.INTER_AREA)
            errs.append(np.abs(p.mean(axis=(0, 1)) - ref.mean(axis=(0, 1))).mean())
        return float(np.median(errs))

    assert error(mapped) < 0.5 * error(frame)


def test_color_map_ignores_a_misidentified_card_and_needs_two_cards() -> None:
    scene = render_table(random_layout(np.random.default_rng(6), 2), 6, RenderSettings(hand_prob=0))
    cards, faces = _whole_cards(scene)
    whole = [(c, _rotation(c[1]), faces[card]) for c, card in cards]
    right = color_map(scene.image, scene.homography, whole)
    # one card named wrongly: the map is almost the same (that card fits far worse and is left out)
    wrong = [*whole[:-1], (whole[-1][0], whole[-1][1], faces[(cards[-1][1] + 37) % len(faces)])]
    got = color_map(scene.image, scene.homography, wrong)
    assert right is not None and got is not None
    assert np.abs(got[:, :3] - right[:, :3]).max() < 0.05
    assert color_map(scene.image, scene.homography, whole[:1]) is None


def _keystoned(face: np.ndarray, rng: np.random.Generator, mm: float) -> np.ndarray:
    """A photo of ``face`` a few degrees off square, cropped where its corners seemed to be: each
    corner up to ``mm`` off, warped back to the face's size (what enrolment keeps of it)."""
    h, w = face.shape[:2]
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    dst = (src + rng.uniform(-mm, mm, (4, 2)) * FACE_PX_PER_MM).astype(np.float32)
    back = cv2.getPerspectiveTransform(dst, src)
    return cv2.warpPerspective(face, back, (w, h), borderMode=cv2.BORDER_REPLICATE)


def _stacked_band(
    face: np.ndarray, below: np.ndarray, rng: np.random.Generator, ppm: float
) -> tuple[np.ndarray, np.ndarray, tuple[float, float]]:
    """A stacked card as the table camera sees it: placed by hand (1.5 mm and 4° off), the next
    card of its column on it (placed the same way) leaving its top band; the frame, its
    calibration and the band's centre (mm)."""
    size = (round(120 * ppm), round(140 * ppm))
    img = np.empty((size[1], size[0], 3), np.uint8)
    img[:] = (90, 110, 130)
    top = 30.0  # mm: the stacked card's top edge
    for k, card in enumerate((face, below)):
        dx, dy = rng.uniform(-1.5, 1.5, 2)
        cy = top + k * BAND_MM + CARD_MM[1] / 2 + dy
        m = cv2.getRotationMatrix2D((FACE_W / 2, FACE_H / 2), rng.uniform(-4, 4), ppm / FACE_PX_PER_MM)
        m[:, 2] += ((60 + dx) * ppm - FACE_W / 2, cy * ppm - FACE_H / 2)
        cv2.warpAffine(card, m, size, dst=img, flags=cv2.INTER_AREA, borderMode=cv2.BORDER_TRANSPARENT)
    img = cv2.GaussianBlur(img, (0, 0), 0.5 * ppm)
    return img, np.diag([ppm, ppm, 1.0]), (60.0, top + BAND_MM / 2)


def test_a_hand_placed_band_is_read_against_a_photo_a_little_off_square() -> None:
    """The band is matched in two halves, each shifted on its own (BAND_PARTS): a card turned a
    few degrees and a reference photographed a millimetre off square move the band's ends apart,
    which one rigid template cannot follow (it reads 96 of these 112, the halves 104)."""
    deck = random_deck(5_150_000)  # a deck of the training side, not the project's faces
    rng = np.random.default_rng(14)
    refs = tuple(_keystoned(f, rng, 1.5) for f in deck)
    ident, rigid = Identifier(refs), Identifier(refs, band_parts=1)
    right = {"parts": 0, "rigid": 0}
    for card in range(N_CARDS):
        frame, h_img, centre = _stacked_band(deck[card], deck[(card * 37 + 5) % N_CARDS], rng, 1.2)
        among = level_cards(int(LEVELS[card]))
        for name, matcher in (("parts", ident), ("rigid", rigid)):
            scores = matcher.band_scores(frame, h_img, centre, 0, among)
            right[name] += int(np.argmax(np.where(among, scores, -np.inf))) == card
    assert right["parts"] >= 102, right
    assert right["rigid"] < right["parts"], right  # the test shows what the halves are for


def test_a_deck_s_hub_does_not_take_other_cards_bands() -> None:
    """A band scored less its reference's hubness (HUB_WEIGHT): a blurred band at 0.8 px/mm is
    mostly the frame-to-paper edge every card shares, and without the correction the references
    with the strongest such edge take bands of other cards (this deck: 106 of 112 read right
    without, 110 with)."""
    deck = random_deck(5_150_001)  # a deck of the training side, not the project's faces
    rng = np.random.default_rng(14)
    refs = tuple(_keystoned(f, rng, 1.5) for f in deck)
    whole_band = (BAND_MM,)  # the views are the next test's
    ident, plain = (
        Identifier(refs, band_views_mm=whole_band),
        Identifier(refs, hub_weight=0, band_views_mm=whole_band),
    )
    assert not plain.hubness.any() and abs(float(ident.hubness.mean())) < 1e-6
    right = {"hub": 0, "plain": 0}
    for card in range(N_CARDS):
        frame, h_img, centre = _stacked_band(deck[card], deck[(card * 37 + 5) % N_CARDS], rng, 0.8)
        among = level_cards(int(LEVELS[card]))
        for name, matcher in (("hub", ident), ("plain", plain)):
            scores = matcher.band_scores(frame, h_img, centre, 0, among)
            right[name] += int(np.argmax(np.where(among, scores, -np.inf))) == card
    assert right["hub"] >= 109, right
    assert right["plain"] < right["hub"], right


def test_a_stacked_band_is_read_in_its_top_view_too() -> None:
    """The band can be matched as a whole and in its top 15 mm (``band_views_mm``, an option): the
    next card of the column, placed by hand, covers the band's bottom edge unevenly (this deck at
    0.8 px/mm: 110 of 112 read right with the whole band alone, 112 with both views)."""
    deck = random_deck(5_150_001)
    rng = np.random.default_rng(14)
    refs = tuple(_keystoned(f, rng, 1.5) for f in deck)
    views, whole = Identifier(refs, band_views_mm=(BAND_MM, 15.0)), Identifier(refs)
    right = {"views": 0, "whole": 0}
    for card in range(N_CARDS):
        frame, h_img, centre = _stacked_band(deck[card], deck[(card * 37 + 5) % N_CARDS], rng, 0.8)
        among = level_cards(int(LEVELS[card]))
        for name, matcher in (("views", views), ("whole", whole)):
            scores = matcher.band_scores(frame, h_img, centre, 0, among)
            right[name] += int(np.argmax(np.where(among, scores, -np.inf))) == card
    assert right["views"] >= 111, right
    assert right["whole"] < right["views"], right


def test_enrolling_a_card_updates_the_hubness_as_a_new_identifier_would() -> None:
    deck = list(random_deck(5_150_001))
    ident = Identifier(tuple(deck))
    photo = cv2.resize(deck[40], (FACE_W // 2, FACE_H // 2))  # card 40's art as card 7's photo
    ident.enrol(7, photo)
    deck[7] = cv2.resize(photo, (FACE_W, FACE_H), interpolation=cv2.INTER_AREA)
    fresh = Identifier(tuple(deck))
    assert ident.band_sims is not None and fresh.band_sims is not None
    assert np.allclose(ident.band_sims, fresh.band_sims, atol=1e-5)
    assert np.allclose(ident.hubness, fresh.hubness, atol=1e-5)


def test_band_parts_out_of_range_is_an_error() -> None:
    with pytest.raises(ValueError, match="band_parts"):
        Identifier(band_parts=0)


def test_band_views_out_of_range_are_an_error() -> None:
    with pytest.raises(ValueError, match="band views"):
        Identifier(band_views_mm=(BAND_MM, 2.0))
    with pytest.raises(ValueError, match="band views"):
        Identifier(band_views_mm=())


def _glared(scene: RenderedScene, amp: float = 110.0, sigma_mm: float = 22.0) -> RenderedScene:
    """``scene`` with a lamp's white sheen across each whole card, off its centre (card stock's
    glare: smooth, up to ``amp`` grey levels)."""
    img = scene.image.astype(np.float32)
    yy, xx = np.mgrid[0 : img.shape[0], 0 : img.shape[1]].astype(np.float32)
    sheen = np.zeros(img.shape[:2], np.float32)
    rng = np.random.default_rng(0)

    def px(x: float, y: float) -> np.ndarray:
        p = np.array([x, y, 1.0]) @ scene.homography.T
        return p[:2] / p[2]

    for o in scene.objects:
        if o.cls != "card":
            continue
        x = (o.box_mm[0] + o.box_mm[2]) / 2 + rng.uniform(-15, 15)
        y = (o.box_mm[1] + o.box_mm[3]) / 2 + rng.uniform(-20, 20)
        (u, v), s = px(x, y), sigma_mm * float(np.linalg.norm(px(x + 1, y) - px(x, y)))
        sheen = np.maximum(sheen, amp * np.exp(-((xx - u) ** 2 + (yy - v) ** 2) / (2 * s * s)))
    return replace(scene, image=np.clip(img + sheen[..., None], 0, 255).astype(np.uint8))


def test_whole_cards_are_read_through_a_lamps_glare() -> None:
    """The matcher compares high-passed patches (HIGHPASS_MM): a smooth sheen on card stock does
    not lift a dark header into another card's colour; without it, glared cards are misread."""
    rng = np.random.default_rng(31)
    scenes = [
        _glared(render_table(random_layout(rng, 4), 31 + i, RenderSettings(size=size, hand_prob=0)))
        for i, size in enumerate([(1280, 720), (1920, 1080)])
    ]
    right, n = _accuracy(Identifier(), scenes)["card"]
    before, _ = _accuracy(Identifier(highpass_mm=0.0), scenes)["card"]
    assert n > 30 and right == n
    assert before < right
