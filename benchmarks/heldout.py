"""Held-out conditions for the vision benchmark: a render style and a deck no training ever sees.

Leave-one-style-out: everything here lives in ``benchmarks/``, which no training code imports
(``tests/test_vision_heldout.py`` checks that), so the detector, the hand network and the marble
color model can never have seen it:

* :data:`STYLE` — table materials of their own (slate, check tablecloth, red-stained and planked
  wood), a lamp between 2700 K and 6500 K that the webcam's white balance only partly corrects,
  webcam processing (vignetting, softness, over-sharpening, luma and chroma noise, strong JPEG),
  cards placed by hand 4 mm and 5° off, ring marbles in touching heaps, VP tokens of another
  printing (:data:`TOKEN_PRINT`: fills, a wide rim, digit color and lettering that no training
  printing has);
* :func:`other_deck` — a deck of different art (random abstract faces, not the project's
  drawings), and :func:`phone_photo`, the enrolment photo a user would take of such a card
  (keystone ~1 mm at the corners, ±6 % color cast, blur, glare, JPEG): the benchmark enrols
  the deck from these photos and plays tables showing the real faces;
* :func:`lookalike_deck` — a deck whose cards share one drawing per colour and type, told apart
  only by title, text and cost (as a printed deck shares its layout), enrolled the same way.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path

import cv2
import numpy as np

from benchmarks.workbench_heldout import draw_glyphs
from referee.gizmos.cards import default_cards
from vision.faces import BAND_MM, FACE_H, FACE_PX_PER_MM, FACE_W, N_CARDS
from vision.training.evaluate import HELDOUT
from vision.training.synth import TokenPrint
from vision.whitebalance import kelvin_gains

#: Seeds of the held-out style's and the other deck's frames (inside the held-out range the
#: dataset code refuses; the project's own held-out frames start at 9,000,000).
STYLE_SEED_BASE = 9_100_000
DECK_SEED_BASE = 9_200_000
DECK_ART_SEED = 424_242
LOOKALIKE_SEED_BASE = 9_300_000
LOOKALIKE_ART_SEED = 515_151


def style_texture(rng: np.random.Generator, w: int, h: int) -> np.ndarray:
    """Held-out table materials: slate, a check tablecloth, red-stained wood, light planks."""
    kind = int(rng.integers(0, 4))
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    if kind == 0:  # slate: dark grey-blue, fine speckles and soft clouds
        base = np.array([rng.uniform(60, 85), rng.uniform(55, 75), rng.uniform(50, 65)], np.float32)
        cloud = cv2.resize(rng.normal(0, 1, (h // 60 + 2, w // 60 + 2)).astype(np.float32), (w, h))
        shade = 1 + 0.1 * cloud + 0.08 * rng.normal(0, 1, (h, w)).astype(np.float32)
        img = shade[..., None] * base
    elif kind == 1:  # check tablecloth: two colors in 25-40 mm squares (canvas 1.6 px/mm)
        p = rng.uniform(40, 64)
        a = np.array(rng.uniform(120, 230, 3), np.float32)
        b = a * rng.uniform(0.45, 0.7)
        check = ((xx // p + yy // p) % 2)[..., None]
        weave = 1 + 0.05 * np.sin(xx * 2.1)[..., None] * np.sin(yy * 2.1)[..., None]
        img = (a * check + b * (1 - check)) * weave
    elif kind == 2:  # red-stained wood (a red marble's worst case), knots and grain
        base = np.array([rng.uniform(30, 55), rng.uniform(40, 70), rng.uniform(110, 170)], np.float32)
        noise = cv2.resize(rng.normal(0, 1, (h // 30 + 2, 6)).astype(np.float32), (w, h))
        grain = np.sin(yy / rng.uniform(3, 7) + 4 * noise)
        img = (1 + 0.15 * grain + 0.05 * noise)[..., None] * base
    else:  # light oak planks with dark seams
        base = np.array([rng.uniform(110, 150), rng.uniform(160, 190), rng.uniform(195, 225)], np.float32)
        plank = rng.uniform(150, 260)
        idx = (yy // plank).astype(np.int32)
        phase = rng.uniform(0, 50, 64).astype(np.float32)[idx % 64]
        grain = np.sin(xx / rng.uniform(6, 14) + phase + 2 * np.sin(yy / 40 + phase))
        seam = (yy % plank < 3).astype(np.float32)
        img = ((1 + 0.08 * grain) * (1 - 0.5 * seam))[..., None] * base
    return np.clip(img, 0, 255).astype(np.uint8)


def webcam(rng: np.random.Generator, img: np.ndarray, kelvin: float | None = None) -> np.ndarray:
    """A lamp of 2700-6500 K (``kelvin``; default drawn at random) that the webcam's white balance
    corrects by 40-80 %, a lamp's fall-off, vignetting, lens softness, over-sharpening, luma and
    chroma noise and a low JPEG quality."""
    h, w = img.shape[:2]
    f = img.astype(np.float32)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    k = rng.uniform(2700, 6500)
    cast = kelvin_gains(kelvin if kelvin is not None else k) ** (1 - rng.uniform(0.4, 0.8))
    lx, ly = rng.uniform(-0.3, 1.3) * w, rng.uniform(-0.3, 1.3) * h
    fall = 1 / (1 + ((xx - lx) ** 2 + (yy - ly) ** 2) / (rng.uniform(0.8, 1.6) * w) ** 2)
    vign = 1 - rng.uniform(0.15, 0.4) * (((xx / w - 0.5) ** 2 + (yy / h - 0.5) ** 2) * 2)
    f *= (rng.uniform(0.85, 1.15) * (0.7 + 0.45 * fall) * vign)[..., None] * cast[None, None, :]
    img = np.clip(f, 0, 255).astype(np.uint8)
    img = cv2.GaussianBlur(img, (0, 0), rng.uniform(0.7, 1.4) * w / 1280)
    if rng.random() < 0.6:  # a webcam's sharpening: halos round edges
        soft = cv2.GaussianBlur(img, (0, 0), 1.5 * w / 1280)
        img = cv2.addWeighted(img, 1.6, soft, -0.6, 0)
    f = img.astype(np.float32)
    luma = rng.normal(0, rng.uniform(2, 7), (h, w, 1)).astype(np.float32)
    chroma = cv2.resize(rng.normal(0, rng.uniform(1, 4), (h // 2, w // 2, 3)).astype(np.float32), (w, h))
    img = np.clip(f + luma + chroma, 0, 255).astype(np.uint8)
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(35, 76))])
    out = cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else img
    assert out is not None  # a JPEG it has just encoded
    return out


#: The held-out VP-token printing besides its fills: a wide cream ring (4 canvas px, 2.5 mm;
#: training's rims are at most ``randomise.TOKEN_RIM_PX``, 3) and a dark red numeral (neither
#: light nor dark in every channel, as training's digits are) in the held-out italic of
#: ``workbench_heldout.GLYPHS`` (no OpenCV font: OpenCV's fonts are training fonts).
#: ``tests/test_vision_randomise.py`` checks it lies outside what training draws.
TOKEN_PRINT = TokenPrint(
    rim=(150, 215, 240), rim_px=4, digits=(40, 50, 110), stroke=3, scale=0.8, lettering=draw_glyphs
)

#: Skin tones of the held-out arms (BGR, deep brown to pale, an olive among them): a palette, where
#: training draws its tones from a line of its own (``randomise.random_hand_look``).
ARM_TONES = ((38, 56, 90), (60, 90, 138), (92, 124, 172), (112, 146, 158), (148, 176, 220), (186, 204, 236))
#: Sleeve yarns of the held-out arms (BGR): navy, forest, burgundy, mustard, charcoal, cream.
ARM_YARNS = ((90, 40, 25), (40, 80, 30), (45, 30, 110), (40, 160, 200), (60, 60, 60), (200, 225, 235))


def held_out_arm(rng: np.random.Generator, along: np.ndarray, across: np.ndarray, palm: float) -> np.ndarray:
    """The held-out arms (a ``synth.HandLook``): a tone of :data:`ARM_TONES` with freckles, bare or
    in a tartan or a ribbed knit sleeve with a ribbed cuff, sometimes a watch strap at the wrist;
    no training look draws tartan, ribs, freckles or straps."""
    h, w = along.shape
    out = np.empty((h, w, 3), np.float32)
    out[:] = np.array(ARM_TONES[int(rng.integers(0, len(ARM_TONES)))], np.float32)
    freckles = rng.random((h // 2 + 1, w // 2 + 1)) < 0.02
    out[cv2.resize(freckles.astype(np.uint8), (w, h), interpolation=cv2.INTER_NEAREST) > 0] *= 0.8
    kind = int(rng.integers(0, 3))  # bare, tartan, ribbed knit
    end = float(rng.uniform(0.45, 0.9)) * palm
    yarns = [np.array(ARM_YARNS[int(i)], np.float32) for i in rng.choice(len(ARM_YARNS), 3, replace=False)]
    fabric: np.ndarray = out  # bare
    if kind == 1:  # tartan: bands of two yarns crossing over a third
        pitch = float(rng.uniform(14, 26))
        fabric = np.broadcast_to(yarns[0], (h, w, 3)).copy()
        fabric[(along % pitch) < 0.35 * pitch] = 0.5 * fabric[(along % pitch) < 0.35 * pitch] + 0.5 * yarns[1]
        cross = (across % pitch) < 0.3 * pitch
        fabric[cross] = 0.5 * fabric[cross] + 0.5 * yarns[2]
    elif kind == 2:  # ribbed knit: ribs along the arm
        fabric = yarns[0] * (0.82 + 0.18 * np.cos(across * 2 * np.pi / 5))[..., None]
    if kind:
        cuff = (along > end - 14) & (along <= end)
        fabric[cuff] = yarns[0] * (0.7 + 0.3 * np.cos(across[cuff] * 2 * np.pi / 3))[..., None]
        out = np.where((along <= end)[..., None], fabric, out)
    elif rng.random() < 0.4:  # a watch strap at the wrist
        out[(along > 0.62 * palm) & (along < 0.62 * palm + 10)] = (30, 30, 35)
    return out


#: The held-out style: on top of the held-out camera settings of ``vision.training.evaluate.HELDOUT``.
STYLE = replace(
    HELDOUT,
    jitter_mm=4.0,
    jitter_deg=5.0,
    texture=style_texture,
    camera=webcam,
    token_fills=((70, 150, 235), (150, 60, 120)),
    token_print=TOKEN_PRINT,
    touching_marbles=True,
)

#: The held-out style with an arm in every frame, drawn by :func:`held_out_arm`.
ARMS = replace(STYLE, hand_prob=1.0, hand_look=held_out_arm)
ARMS_SEED_BASE = 9_600_000


# ----------------------------------------------------------------------------------------------- deck


def _glyphs(img: np.ndarray, rng: np.random.Generator, x: int, y: int, w: int, size: int, ink: tuple) -> None:
    """A line of random glyph-like marks (no font: nothing may be downloaded)."""
    cx = x
    while cx < x + w - size:
        kind = int(rng.integers(0, 4))
        if kind == 0:
            cv2.circle(img, (cx + size // 2, y), size // 2, ink, 1, cv2.LINE_AA)
        elif kind == 1:
            cv2.line(img, (cx, y - size // 2), (cx + size // 2, y + size // 2), ink, 2, cv2.LINE_AA)
        elif kind == 2:
            cv2.rectangle(img, (cx, y - size // 2), (cx + size // 2, y + size // 2), ink, 1)
        else:
            cv2.line(img, (cx, y), (cx + size // 2, y), ink, 2, cv2.LINE_AA)
        cx += size // 2 + int(rng.integers(2, 6))


def random_face(
    rng: np.random.Generator,
    color: str,
    template: np.random.Generator | None = None,
    cost: int | None = None,
) -> np.ndarray:
    """One card of the other deck: a color frame by its energy color, a title band with random
    marks and a colored seal, an abstract picture, a text box of random marks.

    ``template``: where the frame's shade, the paper, the seal's colour and the picture come from
    (default ``rng``): the same template for several cards draws them alike, so that only the
    title, the text and the seal's number (``cost``, default a random one) tell them apart."""
    t = rng if template is None else template
    tint = {
        "red": (60, 60, 200),
        "blue": (200, 120, 50),
        "black": (60, 60, 60),
        "yellow": (60, 200, 230),
    }.get(color, (150, 150, 150))
    frame = np.clip(np.array(tint, np.float32) + t.normal(0, 18, 3), 0, 255)
    img = np.empty((FACE_H, FACE_W, 3), np.uint8)
    img[:] = frame.astype(np.uint8)
    band = round(BAND_MM * FACE_PX_PER_MM)
    inset = 10
    paper = tuple(int(v) for v in t.uniform(200, 245, 3))
    cv2.rectangle(img, (inset, inset), (FACE_W - inset, band - 4), paper, -1)
    _glyphs(img, rng, inset + 45, band // 2, FACE_W - 2 * inset - 50, 16, (30, 30, 30))
    seal = tuple(int(v) for v in t.uniform(0, 255, 3))
    cv2.circle(img, (inset + 22, band // 2), 17, seal, -1, cv2.LINE_AA)
    number = int(rng.integers(1, 8)) if cost is None else cost
    cv2.putText(img, str(number), (inset + 14, band // 2 + 9), 0, 0.8, (255, 255, 255), 2)
    top, bottom = band + 4, FACE_H - 110
    pic = np.empty((bottom - top, FACE_W - 2 * inset, 3), np.uint8)
    c1, c2 = t.uniform(0, 255, 3), t.uniform(0, 255, 3)
    ramp = np.linspace(0, 1, pic.shape[0])[:, None, None]
    pic[:] = (c1 * (1 - ramp) + c2 * ramp).astype(np.uint8)
    for _ in range(int(t.integers(4, 10))):
        col = tuple(int(v) for v in t.uniform(0, 255, 3))
        cx, cy = int(t.integers(0, pic.shape[1])), int(t.integers(0, pic.shape[0]))
        if t.random() < 0.5:
            ax = (int(t.integers(8, 60)), int(t.integers(8, 60)))
            cv2.ellipse(pic, (cx, cy), ax, float(t.uniform(0, 180)), 0, 360, col, -1, cv2.LINE_AA)
        else:
            pts = t.integers(0, [pic.shape[1], pic.shape[0]], (int(t.integers(3, 6)), 2)).astype(np.int32)
            cv2.fillPoly(pic, [pts], col, cv2.LINE_AA)
    img[top:bottom, inset : FACE_W - inset] = pic
    cv2.rectangle(img, (inset, bottom + 6), (FACE_W - inset, FACE_H - inset), paper, -1)
    for k in range(4):
        _glyphs(img, rng, inset + 8, bottom + 25 + 20 * k, FACE_W - 2 * inset - 16, 10, (40, 40, 40))
    return img


@cache
def other_deck(seed: int = DECK_ART_SEED) -> tuple[np.ndarray, ...]:
    """The 112 faces of the other deck (deterministic per seed)."""
    rng = np.random.default_rng(seed)
    return tuple(random_face(rng, c.color) for c in default_cards())


def phone_photo(
    face: np.ndarray, rng: np.random.Generator, width: tuple[int, int] = (180, 320)
) -> np.ndarray:
    """A phone's enrolment photo of one card, cropped to where the user thinks its edges are:
    keystone (each corner up to 1 mm off), ±6 % color cast, blur, glare, JPEG, ``width`` px wide
    (at random between the two, both included)."""
    h, w = face.shape[:2]
    src = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    dst = src + rng.uniform(-1, 1, (4, 2)).astype(np.float32) * FACE_PX_PER_MM
    img: np.ndarray = cv2.warpPerspective(
        face,
        cv2.getPerspectiveTransform(src, dst),
        (w, h),
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=tuple(int(v) for v in rng.uniform(40, 120, 3)),
    ).astype(np.float32)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    ramp = 1 + rng.uniform(-0.1, 0.1) * (xx / w - 0.5) + rng.uniform(-0.1, 0.1) * (yy / h - 0.5)
    img *= ramp[..., None] * rng.uniform(0.94, 1.06, 3)[None, None, :]
    if rng.random() < 0.6:  # glare of the room light on the card's finish
        gx, gy, r = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(0.1, 0.3) * w
        img += (rng.uniform(30, 80) * np.exp(-((xx - gx) ** 2 + (yy - gy) ** 2) / (2 * r * r)))[..., None]
    img = np.clip(img, 0, 255).astype(np.uint8)
    img = cv2.GaussianBlur(img, (0, 0), rng.uniform(0.6, 1.6))
    out_w = int(rng.integers(width[0], width[1] + 1))
    img = cv2.resize(img, (out_w, round(out_w * h / w)), interpolation=cv2.INTER_AREA)
    img = np.clip(img + rng.normal(0, 2.5, img.shape), 0, 255).astype(np.uint8)
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(75, 93))])
    out = cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else img
    assert out is not None  # a JPEG it has just encoded
    return out


@cache
def lookalike_deck(seed: int = LOOKALIKE_ART_SEED) -> tuple[np.ndarray, ...]:
    """The 112 faces of a look-alike deck (deterministic per seed): every card of one energy
    colour and type shares its frame, paper, seal and picture (one template each, as a printed
    deck shares its layout), and only its title, its text and its cost in the seal tell it from
    the others of its template. The other deck's cards differ everywhere; a real deck lies
    between the two."""
    rng = np.random.default_rng(seed)
    colors = sorted({c.color for c in default_cards()})
    kinds = sorted({c.type for c in default_cards()})
    return tuple(
        random_face(
            rng,
            c.color,
            np.random.default_rng([seed, colors.index(c.color), kinds.index(c.type)]),
            c.cost,
        )
        for c in default_cards()
    )


def enrol_photos(folder: Path, faces: tuple[np.ndarray, ...], seed: int) -> Path:
    """Write each face's phone photo (``<id>.jpg``, :func:`phone_photo`) into ``folder``, an
    enrolment folder, and return it."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    for cid, face in enumerate(faces):
        cv2.imwrite(str(folder / f"{cid}.jpg"), phone_photo(face, rng))
    assert len(list(folder.glob("*.jpg"))) >= N_CARDS
    return folder


def enrol_other_deck(folder: Path, seed: int = DECK_ART_SEED) -> Path:
    """Write the other deck's phone photos as an enrolment folder (``<id>.jpg``) and return it."""
    return enrol_photos(folder, other_deck(seed), seed + 1)
