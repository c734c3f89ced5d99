"""A learned card embedding (issue 14, item 2): a small network maps a card's top band (or its
whole face) to a 64-d unit vector, so that the same card seen by the table camera and in its
enrolment photo lie close, whatever the deck's art.

The network is trained across many random decks (``vision/training/embedding.py``), never on
the benchmark's held-out deck or style; it adds what template correlation lacks on an unseen
deck's blurred bands (docs/vision.md, "A learned card embedding"). This module is the runtime
side: how a reference face and a camera patch are prepared as the network's input
(:func:`reference_input`, :func:`patch_input`; training prepares its samples with the same
functions) and the exported network, run on OpenVINO like the detector (or OpenCV's DNN module).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np

from vision.errors import ModelFileError
from vision.faces import BAND_MM, CARD_MM
from vision.networks import BACKENDS, Network, network_input_size
from vision.paths import LOCATIONS

#: The network's input (w, h) per kind at its base resolution (scale 1): a top band at ~1 px/mm
#: (63 × 20 mm), a whole card at ~0.5 px/mm (63 × 88 mm, stretched to a multiple of the network's
#: pooling). A network may take a whole multiple of it (``scale``: :func:`input_size`), read from
#: its file: a band network at scale 2 reads the band at 2 px/mm, where the camera gives more.
INPUT_SIZE: dict[str, tuple[int, int]] = {"band": (64, 20), "face": (32, 48)}
#: The table region (mm) a camera patch covers per kind, centred on the card's box or band.
REGION_MM: dict[str, tuple[float, float]] = {"band": (CARD_MM[0], BAND_MM), "face": CARD_MM}
#: The resolution (px/mm) a camera patch is cut at before it is resized to the input (scale 1).
PATCH_PPM: dict[str, float] = {"band": 1.0, "face": 0.5}
KINDS = ("band", "face")
#: The turns (degrees, about the face's centre) each reference face is embedded at; its vector is
#: the normalised mean. A card placed by hand lies a few degrees off the zone's axis while its
#: patch is cut along the axis, and a turn about the face's centre also moves the band sideways
#: (about 1.5 mm at 2 degrees): the reference covers what the patch will show. Development frames
#: of two decks enrolled from photos (docs/vision.md, "Twenty-second round"), the embedding alone
#: on true boxes: 501 -> 505 of 515 bands and 451 -> 464 of 531; ``(0.0,)`` is the face alone.
REFERENCE_TURNS_DEG: tuple[float, ...] = (-2.0, 0.0, 2.0)


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ValueError(f"card embedding: kind must be one of {KINDS}, not {kind!r}")


def model_path(kind: str) -> Path:
    """The committed embedding network of a kind (``models/card_embedding_<kind>.onnx``)."""
    _check_kind(kind)
    return LOCATIONS.models / f"card_embedding_{kind}.onnx"


def input_size(kind: str, scale: int = 1) -> tuple[int, int]:
    """The input (w, h) of a network of ``kind`` at ``scale`` times the base resolution."""
    _check_kind(kind)
    w, h = INPUT_SIZE[kind]
    return w * scale, h * scale


def reference_input(face: np.ndarray, kind: str, scale: int = 1) -> np.ndarray:
    """A reference face (upright, cropped to the card, any size) as the network's input image
    (uint8 BGR): its top band or the whole card, resized with area averaging."""
    size = input_size(kind, scale)
    if kind == "band":
        face = face[: max(1, round(face.shape[0] * BAND_MM / CARD_MM[1]))]
    return cv2.resize(face, size, interpolation=cv2.INTER_AREA)


def patch_input(patch: np.ndarray, kind: str, scale: int = 1) -> np.ndarray:
    """A camera patch (the card's band or face rectified from the frame at :data:`PATCH_PPM` ×
    ``scale``, :data:`REGION_MM` round its centre) as the network's input image."""
    w, h = input_size(kind, scale)
    interp = cv2.INTER_AREA if patch.shape[1] > w else cv2.INTER_LINEAR
    return cv2.resize(patch, (w, h), interpolation=interp)


def turned(face: np.ndarray, degrees: float) -> np.ndarray:
    """A face turned by ``degrees`` about its centre (its own edge repeated into the corners)."""
    if degrees == 0:
        return face
    h, w = face.shape[:2]
    m = cv2.getRotationMatrix2D((w / 2, h / 2), degrees, 1.0)
    return cv2.warpAffine(face, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def _unit(v: np.ndarray) -> np.ndarray:
    """Each row of ``v`` scaled to length 1 (a zero row stays zero)."""
    return v / (np.linalg.norm(v, axis=1, keepdims=True) + 1e-8)


class CardEmbedder:
    """The exported embedding network of one kind (``band`` or ``face``), on OpenVINO (1.1
    against OpenCV DNN's 3.9 ms of CPU for a frame's ten bands, vectors equal to 2e-7;
    docs/vision.md, "Eleventh round"; two threads since the twenty-first round, as the detector and
    the hand network: an enrolled deck's 30 patches in 27 against 56 ms) or OpenCV's DNN module
    (``backend="opencv"``, the runtime before).

    :meth:`embed` takes input images (:func:`reference_input` / :func:`patch_input`) and gives
    their unit vectors; the dot product of two is their cosine similarity (-1..1).
    """

    def __init__(
        self,
        path: Path | None = None,
        kind: str = "band",
        backend: str = BACKENDS[0],
        turns: tuple[float, ...] = REFERENCE_TURNS_DEG,
    ) -> None:
        _check_kind(kind)
        if not turns:
            raise ValueError("card embedding: at least one reference turn is needed (0.0: the face alone)")
        self.kind, self.backend = kind, backend
        #: The turns each reference face is embedded at (:data:`REFERENCE_TURNS_DEG`).
        self.turns = turns
        self.path = path if path is not None else model_path(kind)
        self.net = Network(self.path, "card embedding model", backend, threads=2)
        #: The network's resolution: its input is :func:`input_size` ``(kind, scale)``.
        self.scale = _scale_of(self.path, kind)
        #: The resolution (px/mm) to cut camera patches at for this network.
        self.patch_ppm = PATCH_PPM[kind] * self.scale

    def embed(self, images: Sequence[np.ndarray]) -> np.ndarray:
        """Unit vectors (n × d, float32) of input images of this network's size (BGR uint8)."""
        w, h = input_size(self.kind, self.scale)
        if not images:
            return np.zeros((0, 0), np.float32)
        for img in images:
            if img.shape[:2] != (h, w):
                raise ValueError(
                    f"card embedding: an input of {img.shape[1]}x{img.shape[0]} px;"
                    f" the {self.kind} network takes {w}x{h}"
                )
        out = []
        for i in range(0, len(images), 64):  # the exported network takes batches of any size
            blob = cv2.dnn.blobFromImages(list(images[i : i + 64]), 1 / 255.0, (w, h), swapRB=True)
            out.append(self.net.run(blob).reshape(len(blob), -1))
        return _unit(np.concatenate(out))

    def references(self, faces: Sequence[np.ndarray]) -> np.ndarray:
        """The unit vectors of reference faces (by card id), as :func:`reference_input` prepares
        them: each the normalised mean of the face's vectors at :attr:`turns`."""
        if not faces:
            return self.embed([])
        inputs = [reference_input(turned(f, t), self.kind, self.scale) for t in self.turns for f in faces]
        v = self.embed(inputs)  # every turn of every face in one batch, turn by turn
        return _unit(v.reshape(len(self.turns), len(faces), -1).sum(axis=0))

    def patches(self, patches: Sequence[np.ndarray]) -> np.ndarray:
        """The unit vectors of camera patches (cut at :attr:`patch_ppm`), as :func:`patch_input`
        prepares them."""
        return self.embed([patch_input(p, self.kind, self.scale) for p in patches])


def _scale_of(path: Path, kind: str) -> int:
    """The scale of an embedding network's input (its file says its size; one clear error if it
    is no whole multiple of the kind's base size)."""
    w, h = network_input_size(path, "card embedding model")
    base = INPUT_SIZE[kind]
    scale = w // base[0]
    if scale < 1 or (w, h) != input_size(kind, scale):
        raise ModelFileError(
            f"card embedding model {path}: its input is {w}x{h} px, not a whole multiple of the"
            f" {kind} network's {base[0]}x{base[1]}"
        )
    return scale
