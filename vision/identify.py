"""Card identification: which of the 112 faces a detected card (or a stacked card's top band) is.

A detected box is rectified from the camera frame through the calibration homography into a
small patch in table millimetres, turned to the card's reading direction, and compared with
every reference face by normalised cross-correlation over a few millimetres of shift (the box
is only roughly aligned). Full faces use the whole card at 0.5 px/mm plus the top band at
1 px/mm; stacked cards use the band alone. The band is matched in two halves, each shifted on its
own (:data:`BAND_PARTS`): a card turned a few degrees, or a photo a few degrees off square,
moves the band's two ends apart by more than its detail. References are rebuilt from enrolled photos when
present, so identification follows the user's own copy.

What the table itself says narrows the choice (:func:`assign`): a Display row only holds cards
of its level, a dashboard column only cards of its type, every card exists once, and a seat's
Starting Gizmo is card #seat (the four are identical on real copies; the rules engine gives
seat ``s`` Starting Gizmo ``s``).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

import cv2
import numpy as np

from referee.gizmos.cards import default_cards
from vision.embedding import REGION_MM, CardEmbedder
from vision.faces import BAND_MM, CARD_MM, FACE_H, FACE_PX_PER_MM, FACE_W, N_CARDS, face_set
from vision.geometry import table_patch

BAND_PPM = 1.0  # px/mm of band patches
FULL_PPM = 0.5  # px/mm of whole-card patches
SHIFT_MM = 3.0  # search radius around the detected box centre (band)
FULL_SHIFT_MM = 6.0
#: The top band is correlated in this many side-by-side parts, each over its own ±``SHIFT_MM``
#: of shift, and scored by their mean: a stacked card is turned up to ~5° by hand (its band's
#: ends ±2.7 mm apart), the card on it covers its lower edge unevenly, and a phone photo of a
#: few degrees off square shears the reference by a millimetre or two; one rigid 63 × 20 mm
#: template at 1 px/mm cannot follow that, two halves can. Chosen on development decks
#: (``benchmarks/identify_methods.py --phone --decks random,drawn`` and randomised tables;
#: docs/vision.md, "Top bands in two halves"): 2 parts beat 1, 3, overlapping halves and
#: halves held to each other's shift under keystone, loose crops and everything at once; one
#: rigid template wins only where the reference is exact or a colour cast is the one fault.
BAND_PARTS = 2
#: A top band's score is lowered by this much of its reference's *hubness* (how well that
#: reference's band matches other cards' bands, as the matcher scores them: the mean of its
#: :data:`HUB_NEIGHBOURS` best matches among the other references' bands, less the deck's mean).
#: A blurred band at ~1 px/mm is mostly its frame-to-paper edge, which every card of a deck
#: shares; the reference with the strongest such edge (a dark frame round light paper) then
#: out-scores the right card on many bands (a "hub"). Only a band seen alone (a stacked card) is
#: corrected: a card seen whole is read by its face, and the correction on its band cost the
#: drawn faces whole cards on development tables. Chosen on development decks (docs/vision.md,
#: "Top bands and the deck's hubs"): 0.5-1.0 all helped, 0.7 most.
HUB_WEIGHT = 0.7
#: The heights (mm from the band's top) of the views a band seen alone is matched in, each in
#: :data:`BAND_PARTS` parts, scored by the mean of all. ``(BAND_MM, 15.0)`` (the whole band and
#: its top 15 mm, which the next card of a column does not cover) read development decks' bands
#: 2-6 points better but cost the benchmark's own faces 2 of 243 bands on true boxes and the
#: held-out style 3 of 324 bands by the matcher alone (docs/vision.md, "Top bands and the deck's
#: hubs"): measured, not shipped; the whole band alone is.
BAND_VIEWS_MM: tuple[float, ...] = (BAND_MM,)
HUB_NEIGHBOURS = 10
#: How much of the learned band embedding's cosine similarity (:mod:`vision.embedding`) a band
#: seen alone adds to its correlation, when an :class:`Identifier` is given the embedding
#: (``Identifier(embedding=CardEmbedder())``). Chosen on development decks (0.1-1.0 measured;
#: 1.0 read random decks' bands best, the drawn faces' alike at every weight): docs/vision.md,
#: "A learned card embedding". The project's drawn faces keep it (``Observer``).
EMBEDDING_WEIGHT = 1.0
#: The same for a deck enrolled from photos (``Observer(enrol_dir=...)``): there the correlation
#: alone ranks a band's card first for two bands in three, the embedding alone for 97 of 100, and
#: with the references embedded at turns (:data:`vision.embedding.REFERENCE_TURNS_DEG`) more of
#: the embedding reads more: four development sets, bands on true boxes, 919 / 944 / 956 of 981
#: at 1 / 2 / 3; the drawn faces lost a gizmo's band at 3 (docs/vision.md, "Twenty-second round").
EMBEDDING_WEIGHT_ENROLLED = 3.0
#: With the embedding, a band seen alone scores its correlation plus ``embedding_weight`` × a
#: cosine (two terms of about the same spread, where the memory's bonus was chosen for one):
#: the referee's memory's bonus for such a band is scaled by ``1 + EMBEDDING_MEMORY ×
#: embedding_weight`` (:meth:`Identifier.memory_scale`), so it keeps its share of the score. On
#: development decks, with the memory exact and one move behind, scales of 1-3 × read every band
#: alike (none lost); 1.0 follows from the score's two terms, and on the benchmark it kept the
#: band the plain bonus lost (docs/vision.md, "Eleventh round").
EMBEDDING_MEMORY = 1.0
#: How much of the embedding's cosine for a card seen whole (its top band, cut from the whole
#: card) its score adds: a whole card is read by its face and its band (0.5 each), where a deck
#: whose cards share their pictures (look-alikes, as a printed deck's layout is) differs in the
#: title and cost the band holds. 0: whole cards are read without the embedding. Thirteenth round
#: (one network): 0.5, since at 1 the development frames of ``deck`` (a deck whose cards differ
#: everywhere, where the face alone is sure) lost 3 oracle observations of 60. Fourteenth round
#: (the ensemble of three networks now shipped; docs/vision.md, "Fourteenth round"): at 1 the
#: ``deck`` development frames read every observation as at 0.5 (oracle 50, pipeline 44 of 60;
#: whole cards by the matcher alone 1,231 against 1,232 of 1,242), and the project's drawn faces
#: enrolled from phone photos (a look-alike deck) 96.9 / 97.5 % of whole cards against 95.3 /
#: 96.9 %.
EMBEDDING_WHOLE = 1.0
#: ... among the cards whose score without it is within this of the best (the cards the face
#: cannot tell apart); a card further behind gets the least the cosine can give (-1), so that a
#: face that stands out keeps its card. ``inf``: every card adds its cosine. Margins of 0.03-0.1
#: kept ``deck``'s development frames but gave back most of the look-alikes' gain (89.1 / 92.3 %
#: at 0.06): not used.
EMBEDDING_WHOLE_MARGIN = float("inf")
#: The matcher compares whole cards high-passed: patch and reference each less its own Gaussian
#: blur of this many mm (0: not). A lamp's glare on card stock (a broad white sheen across half a
#: card, which lifts a black header to grey and lets a black card match its yellow or red twin),
#: its fall-off and the shade of a card on a card are smooth; the printing that tells cards apart
#: is not. Chosen on development frames of the ray-traced tables (docs/vision.md, "Sixteenth
#: round"; 5, 8 and 12 mm alike there). Top bands are not high-passed: on random decks enrolled
#: from phone photos it lost bands (``tests/test_vision_identify.py``'s hub and view tests).
HIGHPASS_MM = 8.0
#: The learned embedding reads reference faces blurred by a Gaussian of this many mm (one sigma):
#: its camera patches are cut at 1 px/mm, but a 1280×720 camera sees the far seats at 0.45-0.8
#: px/mm, so a patch there is an upsampling, much softer than a phone photo's 3-5 px/mm or a drawn
#: face. On the development frames of ``deck`` every band misread on true boxes lay where the
#: camera saw under 0.8 px/mm. Blurring the references 1 mm read development decks' bands
#: better (oracle boxes: ``deck`` 9,260,000+, 9,270,000+, 9,280,000+ 79 -> 84 of 90 tables,
#: ``lookalike`` 9,360,000+ bands 247 -> 263 of 281) and the drawn faces alike; blurring each
#: band's references to the camera's resolution at that band read no more (docs/vision.md,
#: "Twenty-fifth round"). 0: the faces as they are (the matcher before that round).
EMBEDDING_REFERENCE_BLUR_MM = 1.0
MAX_SUBSETS = 48  # candidate subsets of the references kept (Identifier._among)
LEVELS = np.array([c.level for c in default_cards()])
TYPES = np.array([c.type for c in default_cards()])
STARTING = np.flatnonzero(LEVELS == 0)  # the Starting Gizmos, one per seat


def level_cards(level: int) -> np.ndarray:
    """Candidate mask: the cards of one level (a Display row)."""
    return np.equal(LEVELS, level)


def built_cards() -> np.ndarray:
    """Candidate mask: cards that can be built or archived (every card but the Starting Gizmos)."""
    return LEVELS > 0


def column_cards(column: str, seat: int) -> np.ndarray:
    """Candidate mask for one of a seat's dashboard columns: the built cards of that type.

    The rules place every built gizmo in the column of its type; the file column also holds the
    seat's own Starting Gizmo.
    """
    mask = (LEVELS > 0) & (column == TYPES)
    if column == default_cards()[seat].type:
        mask[seat] = True
    return mask


#: What the referee's memory adds to the correlation of the card it expects at a place (a seat's
#: own cards in its area, the Display card it knows in a slot): a card that stays keeps its
#: identity unless the picture says otherwise by more than this. Chosen on development frames of
#: random decks (docs/vision.md, "The referee's memory"): 0.1 left bands of an unseen deck at
#: 98.5 %, 0.25 read all 200 right, 0.4 began to hold a card just built to a remembered one.
MEMORY_BONUS = 0.25


@dataclass(frozen=True, slots=True)
class CardMemory:
    """What the referee knows about the cards, as plain data from whoever follows the game.

    ``gizmos`` and ``archive``: per seat, the cards it built and those in its Archive;
    ``display``: the card it knows in each Display slot ``(level, slot)``; ``unseen``: the cards
    that may still appear (in the decks or a Research hand). A card moves only from the Display
    or a deck to a seat, and from a seat's Archive to its gizmos: so a Display slot holds its
    known card or an unseen one of its level, a seat's gizmos hold its own cards (built, or
    built from its Archive), a Display card or an unseen one, never another seat's; and its
    Archive the same but its built gizmos (a built card never goes back). ``bonus`` is added to
    the score of the cards the memory expects at a place: the Display slot's card, the seat's
    gizmos in its gizmos, its Archive in its Archive.
    """

    gizmos: Mapping[int, Collection[int]] = field(default_factory=dict)
    archive: Mapping[int, Collection[int]] = field(default_factory=dict)
    display: Mapping[tuple[int, int], int] = field(default_factory=dict)
    unseen: Collection[int] = ()
    bonus: float = MEMORY_BONUS

    def slot(self, level: int, slot: int, allowed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Candidates and memory bonus for a Display slot whose table candidates are ``allowed``."""
        row = [c for (lv, _), c in self.display.items() if lv == level]
        bonus = np.zeros(N_CARDS, np.float32)
        known = self.display.get((level, slot))
        if known is not None:
            bonus[known] = self.bonus
        return _narrowed(allowed, _card_mask([*self.unseen, *row])), bonus

    def seat(self, seat: int, allowed: np.ndarray, archive: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Candidates and memory bonus for a card in ``seat``'s gizmos (or, ``archive``, its Archive)."""
        gizmos, kept = _card_mask(self.gizmos.get(seat, ())), _card_mask(self.archive.get(seat, ()))
        arriving = _card_mask([*self.unseen, *self.display.values()])
        bonus = np.where(kept if archive else gizmos, self.bonus, 0.0).astype(np.float32)
        return _narrowed(allowed, kept | arriving if archive else gizmos | kept | arriving), bonus


def _card_mask(cards: Collection[int]) -> np.ndarray:
    m = np.zeros(N_CARDS, bool)
    m[[c for c in cards if 0 <= c < N_CARDS]] = True
    return m


def _narrowed(allowed: np.ndarray, known: np.ndarray) -> np.ndarray:
    """``allowed`` narrowed to ``known``, unless that leaves nothing (then the memory is wrong)."""
    both = allowed & known
    return both if both.any() else allowed


#: :class:`_Matches` scores a patch from its raw windows unless one of them is this
#: flat against the patch's contrast (its centred norm below this share of the patch's largest
#: window norm), where float32 rounding of the raw product could show; such a patch (a black
#: warp border, an empty test frame) is scored window by window normalised instead.
FLAT_WINDOW = 0.02


def _box_sums(img: np.ndarray, tw: int, th: int) -> tuple[np.ndarray, np.ndarray]:
    """The sum and the sum of squares (float64, over every channel) of each ``tw × th`` window of
    an image, shifts row-major, from its integral images."""
    s, sq = cv2.integral2(img, sdepth=cv2.CV_64F, sqdepth=cv2.CV_64F)

    def windows(c: np.ndarray) -> np.ndarray:
        w = c[th:, tw:] - c[:-th, tw:] - c[th:, :-tw] + c[:-th, :-tw]
        return (w.sum(axis=2) if w.ndim == 3 else w).reshape(-1)

    return windows(s), windows(sq)


def _size(w_mm: float, h_mm: float, ppm: float) -> tuple[int, int]:
    return round(w_mm * ppm), round(h_mm * ppm)


def _normalise(v: np.ndarray, own: bool = False) -> np.ndarray:
    """Zero-mean, unit-norm rows (so a dot product is the correlation coefficient); ``own``: ``v``
    is a float32 array of the caller's that may be overwritten (saves two copies of it).

    The arithmetic is ``np.linalg.norm``'s, step for step, so results do not depend on ``own``."""
    if not own:
        v = v - v.mean(axis=-1, keepdims=True)
    else:
        v -= v.mean(axis=-1, keepdims=True)
    norm = np.sqrt(np.add.reduce(v * v, axis=-1, keepdims=True))
    if not own:
        return v / (norm + 1e-6)
    v /= norm + 1e-6
    return v


@dataclass(frozen=True, slots=True)
class Match:
    """The best card, its score (correlation, -1..1) and the margin to the runner-up."""

    card: int
    score: float
    margin: float

    @property
    def confidence(self) -> float:
        """A 0..1 confidence from score and margin (a calibrated probability it is not)."""
        return float(np.clip(0.5 * (self.score + 1) * min(1.0, 0.5 + 5 * self.margin), 0.0, 1.0))


#: One place to score (:meth:`Identifier.scores`): the centre in table mm, the reading direction
#: (0 or 180), the candidate mask (``None``: every card) and whether the card is seen whole (else
#: only its top band).
CardPlace = tuple[tuple[float, float], int, "np.ndarray | None", bool]


def top_band_centre(center_mm: tuple[float, float], degrees: float) -> tuple[float, float]:
    """The centre of a whole card's top band (table mm): towards the card's top, which a card
    turned ``degrees`` (its reading direction and any further turn) has turned with it."""
    up = CARD_MM[1] / 2 - BAND_MM / 2
    t = math.radians(degrees)
    return (center_mm[0] + up * math.sin(t), center_mm[1] - up * math.cos(t))


class Identifier:
    """Reference descriptors of the 112 faces and the matcher.

    Options (measured in ``benchmarks/identify_methods.py``; docs/vision.md has the figures):
    ``color_norm`` normalises each color channel of a window on its own (a lamp's tint or a
    photo's color cast scales channels, and is gone); ``soften_mm`` blurs patches and references
    by that much more (a phone photo's keystone and a hand-placed card move detail by about a
    millimetre); ``angles`` are the card rotations searched (degrees); ``gradients`` correlates
    edge strength instead of color; ``band_ppm`` is the top band's resolution (px/mm);
    ``band_parts`` the number of parts the band is matched in (:data:`BAND_PARTS`; 1: one rigid
    template, the matcher before issue 14's fifth round); ``hub_weight`` how much of each band
    reference's hubness its band scores lose (:data:`HUB_WEIGHT`; 0: none, the matcher before);
    ``band_views_mm`` the heights from the band's top of the views it is matched in
    (:data:`BAND_VIEWS_MM`; ``(BAND_MM,)``: the whole band only, the matcher before);
    ``highpass_mm`` high-passes patches and references (:data:`HIGHPASS_MM`; 0: the matcher
    before the sixteenth round); ``embedding`` a learned band embedding
    (:class:`vision.embedding.CardEmbedder`; ``None``, the default: none) whose cosine
    similarity, times ``embedding_weight``, a band seen alone adds
    (and, times ``embedding_whole``, a card seen whole, :data:`EMBEDDING_WHOLE`).
    """

    def __init__(
        self,
        faces: tuple[np.ndarray, ...] | None = None,
        enrol_dir: str | None = None,
        *,
        color_norm: bool = False,
        soften_mm: float = 0.0,
        angles: tuple[float, ...] = (0.0,),
        gradients: bool = False,
        band_ppm: float = BAND_PPM,
        band_parts: int = BAND_PARTS,
        hub_weight: float = HUB_WEIGHT,
        band_views_mm: tuple[float, ...] = BAND_VIEWS_MM,
        embedding: CardEmbedder | None = None,
        embedding_weight: float = EMBEDDING_WEIGHT,
        embedding_memory: float = EMBEDDING_MEMORY,
        embedding_whole: float = EMBEDDING_WHOLE,
        embedding_whole_margin: float = EMBEDDING_WHOLE_MARGIN,
        highpass_mm: float = HIGHPASS_MM,
        reference_blur_mm: float = EMBEDDING_REFERENCE_BLUR_MM,
    ) -> None:
        faces = faces if faces is not None else face_set(enrol_dir)
        #: The reference faces (drawn, or the user's enrolled photos), by card id.
        self.faces = faces
        self.color_norm, self.soften_mm, self.angles, self.gradients = (
            color_norm,
            soften_mm,
            angles,
            gradients,
        )
        self.band_ppm, self.highpass_mm = band_ppm, highpass_mm
        self.band_size = _size(CARD_MM[0], BAND_MM, band_ppm)
        w = self.band_size[0]
        if not 1 <= band_parts <= w // 4:
            raise ValueError(f"identification: band_parts must be 1-{w // 4}, not {band_parts}")
        #: The band's parts: template columns [x0, x1) of each (side by side, together the band).
        self.band_cols = tuple((w * j // band_parts, w * (j + 1) // band_parts) for j in range(band_parts))
        if not all(4 <= v <= BAND_MM for v in band_views_mm) or not band_views_mm:
            raise ValueError(f"identification: band views must be 4-{BAND_MM:g} mm high, not {band_views_mm}")
        #: The band's windows: (rows from its top, first column, end column) of each view's parts.
        self.band_windows = tuple(
            (min(self.band_size[1], round(v * band_ppm)), x0, x1)
            for v in band_views_mm
            for x0, x1 in self.band_cols
        )
        self.full_size = _size(CARD_MM[0], CARD_MM[1], FULL_PPM)
        #: ``refs[among]`` by (id of the reference set, candidate mask): see :meth:`_among`.
        self._subsets: dict[tuple[int, bytes], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        refs = [self._references(f) for f in faces]
        #: One array of references per band window (each view's parts; rows by card id), and the whole cards'.
        self.band_refs = tuple(np.concatenate([b[j] for b, _ in refs]) for j in range(len(self.band_windows)))
        self.full_refs = np.concatenate([f for _, f in refs])
        self.hub_weight = hub_weight
        #: ``band_sims[j, i]``: card ``j``'s reference band scored against reference ``i`` (see
        #: :meth:`_band_sims`); ``hubness``: per reference, what its band scores lose.
        self.band_sims = self._band_sims(faces, range(len(faces)), self.band_refs) if hub_weight else None
        self.hubness = self._hubness(self.band_sims)
        self.embedding, self.embedding_weight = embedding, embedding_weight
        self.embedding_memory, self.embedding_whole = embedding_memory, embedding_whole
        self.embedding_whole_margin = embedding_whole_margin
        self.reference_blur_mm = reference_blur_mm
        #: The reference bands' unit vectors under :attr:`embedding` (rows by card id), or ``None``.
        self.band_vectors = self.reference_vectors(faces) if embedding is not None else None

    def reference_vectors(self, faces: Sequence[np.ndarray]) -> np.ndarray:
        """Reference faces' band vectors under :attr:`embedding`, each face blurred
        :attr:`reference_blur_mm` first (:data:`EMBEDDING_REFERENCE_BLUR_MM`)."""
        if self.embedding is None:
            raise ValueError("identification: reference vectors need an embedding")
        sigma = self.reference_blur_mm * FACE_PX_PER_MM
        if sigma > 0:
            faces = [cv2.GaussianBlur(f, (0, 0), sigma) for f in faces]
        return self.embedding.references(faces)

    def memory_scale(self, whole: bool) -> float:
        """What the referee's memory's bonus is multiplied by for a card seen ``whole`` or as a
        band alone: with the embedding a score has two terms (:data:`EMBEDDING_MEMORY`)."""
        if self.embedding is None:
            return 1.0
        return 1.0 + self.embedding_memory * (self.embedding_whole if whole else self.embedding_weight)

    def _padded_band(self, face: np.ndarray) -> np.ndarray:
        """A face's top band as the matcher cuts a patch: at the band's resolution, the search
        margin round it (the band's own edge repeated), prepared like a patch."""
        band_px = round(BAND_MM * FACE_PX_PER_MM)
        band = cv2.resize(face[:band_px], self.band_size, interpolation=cv2.INTER_AREA)
        m = round(SHIFT_MM * self.band_ppm)
        return self._prep(cv2.copyMakeBorder(band, m, m, m, m, cv2.BORDER_REPLICATE), self.band_ppm)

    def _band_sims(
        self,
        faces: Sequence[np.ndarray],
        which: Sequence[int] | range,
        band_refs: tuple[np.ndarray, ...],
        among: np.ndarray | None = None,
    ) -> np.ndarray:
        """The band scores (the mean of the parts' best shifted correlations, as :meth:`scores`
        gives a band) of the faces ``which`` against every reference of ``band_refs`` (or those
        in ``among``)."""
        matches = _Matches(self)
        asked = []
        for j in which:
            asked.append(self._band_parts(matches, self._padded_band(faces[j]), band_refs, among))
        got = matches.run()
        return np.stack([sum(got[k] for k in parts) / len(parts) for parts in asked]).astype(np.float32)

    def _hubness(self, sims: np.ndarray | None) -> np.ndarray:
        """Each reference's hubness times :attr:`hub_weight`, centred on the deck's mean (so the
        scores keep their level): the mean of its :data:`HUB_NEIGHBOURS` best scores as another
        card's band."""
        if sims is None or len(sims) <= HUB_NEIGHBOURS:
            return np.zeros(len(self.faces), np.float32)
        others = sims.copy()
        np.fill_diagonal(others, -np.inf)
        hub = np.sort(others, axis=0)[-HUB_NEIGHBOURS:].mean(axis=0)
        return (self.hub_weight * (hub - hub.mean())).astype(np.float32)

    def _references(self, face: np.ndarray) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
        """One face's band parts and whole-card reference, as the matcher compares them."""
        band_px = round(BAND_MM * FACE_PX_PER_MM)
        band = cv2.GaussianBlur(
            cv2.resize(face[:band_px], self.band_size, interpolation=cv2.INTER_AREA), (3, 3), 0
        )
        band = self._prep(band, self.band_ppm)
        full = cv2.resize(face, self.full_size, interpolation=cv2.INTER_AREA)
        return (
            tuple(self._windows(band[:th, x0:x1], x1 - x0, th) for th, x0, x1 in self.band_windows),
            self._windows(self._prep(full, FULL_PPM, whole=True), *self.full_size),
        )

    def enrol(self, card: int, face: np.ndarray) -> None:
        """Use ``face`` (upright, cropped to the card, any size) as card ``card``'s reference from
        now on. Thread-safe for a matcher running meanwhile: new arrays replace the old ones."""
        face = cv2.resize(face, (FACE_W, FACE_H), interpolation=cv2.INTER_AREA)
        band, full = self._references(face)
        band_refs, full_refs = tuple(b.copy() for b in self.band_refs), self.full_refs.copy()
        for refs, part in zip(band_refs, band, strict=True):
            refs[card] = part[0]
        full_refs[card] = full[0]
        faces = list(self.faces)
        faces[card] = face
        sims = None
        if self.band_sims is not None:  # the card's row and column of band scores, afresh
            sims = self.band_sims.copy()
            sims[card] = self._band_sims(faces, [card], band_refs)[0]
            only = np.zeros(len(faces), bool)
            only[card] = True
            sims[:, card] = self._band_sims(faces, range(len(faces)), band_refs, only)[:, card]
        if self.embedding is not None and self.band_vectors is not None:
            vectors = self.band_vectors.copy()
            vectors[card] = self.reference_vectors([face])[0]
            self.band_vectors = vectors
        self.faces, self.band_refs, self.full_refs = tuple(faces), band_refs, full_refs
        self.band_sims, self.hubness = sims, self._hubness(sims)
        self._subsets = {}  # of the old references: no longer used, let them go

    def _prep(self, img: np.ndarray, ppm: float, whole: bool = False) -> np.ndarray:
        """A patch or reference as the matcher compares it (float, softened, or its edge strength;
        a ``whole`` card's high-passed, :data:`HIGHPASS_MM`)."""
        f: np.ndarray = img.astype(np.float32)
        if self.gradients:
            g = cv2.cvtColor(f, cv2.COLOR_BGR2GRAY)
            f = cv2.magnitude(cv2.Sobel(g, cv2.CV_32F, 1, 0), cv2.Sobel(g, cv2.CV_32F, 0, 1))
        if self.soften_mm > 0:
            f = cv2.GaussianBlur(f, (0, 0), self.soften_mm * ppm)
        if whole and self.highpass_mm > 0:
            f -= cv2.GaussianBlur(f, (0, 0), self.highpass_mm * ppm)
        return f

    def _windows(self, patch: np.ndarray, tw: int, th: int) -> np.ndarray:
        """All ``tw × th`` windows of a patch at 1 px, flattened and normalised (per channel first
        when ``color_norm``)."""
        # One copy of all windows (row-major over the shifts, each window row-major): the
        # sliding view's window axes go last, so they are moved back in front of the channels.
        view = np.lib.stride_tricks.sliding_window_view(patch, (th, tw), axis=(0, 1))
        if patch.ndim == 3:
            view = view.transpose(0, 1, 3, 4, 2)
        rows = np.array(view, np.float32, order="C").reshape(view.shape[0] * view.shape[1], *view.shape[2:])
        if self.color_norm and rows.ndim == 4:
            rows = rows.reshape(len(rows), -1, rows.shape[-1])
            rows = rows - rows.mean(axis=1, keepdims=True)
            rows = rows / (rows.std(axis=1, keepdims=True) + 2.0)  # +2: a flat channel stays flat
        return _normalise(rows.reshape(len(rows), -1), own=True)

    def _best(self, windows: np.ndarray, refs: np.ndarray, among: np.ndarray | None) -> np.ndarray:
        """Each reference's best correlation over the windows; -inf for references not asked about."""
        if among is None:
            return (windows @ refs.T).max(axis=0)
        out = np.full(len(refs), -np.inf, np.float32)
        out[among] = (windows @ self._among(refs, among)[0].T).max(axis=0)
        return out

    def _among(self, refs: np.ndarray, among: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``refs[among]`` and its rows' sums (float64, :class:`_Matches`), kept per candidate mask
        (a Display row, a column, what the referee's memory allows) for as long as ``refs`` is the
        reference set in use: the same few masks come back frame after frame, and copying the rows
        was a tenth of the matcher's time. :meth:`enrol` replaces ``refs``, so a kept subset of
        the old set is never used."""
        key = (id(refs), among.tobytes())
        kept = self._subsets.get(key)
        if kept is not None and kept[0] is refs:
            return kept[1], kept[2]
        if len(self._subsets) >= MAX_SUBSETS:  # the memory's masks change as the game goes on
            self._subsets.clear()
        sub = refs[among]
        sums = sub.sum(axis=1, dtype=np.float64)
        self._subsets[key] = (refs, sub, sums)
        return sub, sums

    def scores(
        self,
        frame: np.ndarray,
        h_img: np.ndarray,
        places: Sequence[CardPlace],
        cosines: Mapping[int, np.ndarray] | None = None,
    ) -> list[np.ndarray]:
        """:meth:`card_scores` or :meth:`band_scores` of each place, the places' windows matched
        together: one matrix product per reference set and candidate mask for all of them
        (:class:`_Matches`), which reads each set of references once and keeps the product's rows
        many (a frame's Display row or column of cards shares one mask). ``cosines``: the
        embedding's :meth:`band_cosines` of these places, when already known (computed here
        otherwise)."""
        matches = _Matches(self)
        # Per place and angle: the whole card's match (or None) and its band parts' matches.
        asked: list[list[tuple[int | None, list[int]]]] = []
        for center_mm, rotation, among, whole in places:
            per_angle = []
            for angle in self.angles:
                full, band_c = None, center_mm
                if whole:
                    m = 2 * FULL_SHIFT_MM
                    size = (CARD_MM[0] + m, CARD_MM[1] + m)
                    patch = table_patch(frame, h_img, center_mm, size, FULL_PPM, rotation, angle)
                    full = matches.add(
                        self._prep(patch, FULL_PPM, whole=True), *self.full_size, self.full_refs, among
                    )
                    band_c = top_band_centre(center_mm, angle + rotation)
                per_angle.append(
                    (full, self._band(matches, frame, h_img, band_c, rotation, among, angle, whole))
                )
            asked.append(per_angle)
        got = matches.run()
        learned = self.band_cosines(frame, h_img, places) if cosines is None else cosines
        out = []
        for k, per_angle in enumerate(asked):
            scored = []
            for full, parts in per_angle:
                band = got[parts[0]]  # the mean of the band's views' parts, each shifted on its own
                for more in parts[1:]:
                    band = band + got[more]
                band = band / len(parts)
                # A card seen whole is read by its face: only a band alone is corrected for hubs
                # (and helped by the learned embedding, when there is one).
                if full is None:
                    band = band - self.hubness
                    if k in learned:
                        band = band + self.embedding_weight * learned[k]
                if full is None:
                    scored.append(band)
                    continue
                face = 0.5 * got[full] + 0.5 * band
                if k in learned:
                    near = face >= face.max() - self.embedding_whole_margin
                    face = face + self.embedding_whole * np.where(near, learned[k], -1.0)
                scored.append(face)
            out.append(np.max(scored, axis=0))
        return out

    def band_cosines(
        self, frame: np.ndarray, h_img: np.ndarray, places: Sequence[CardPlace]
    ) -> dict[int, np.ndarray]:
        """The embedding's cosine similarity with every reference band, by the index of each place
        seen as a band alone, and of each card seen whole when :attr:`embedding_whole` (its top
        band; none without an embedding): one batch for the frame's bands."""
        if self.embedding is None or self.band_vectors is None:
            return {}
        asked = [k for k, (*_, whole) in enumerate(places) if not whole or self.embedding_whole]
        if not asked:
            return {}
        patches, ppm = [], self.embedding.patch_ppm
        for k in asked:
            center, rotation, _, whole = places[k]
            if whole:
                center = top_band_centre(center, rotation)
            patches.append(table_patch(frame, h_img, center, REGION_MM["band"], ppm, rotation))
        sims = self.embedding.patches(patches) @ self.band_vectors.T
        return {k: sims[i].astype(np.float32) for i, k in enumerate(asked)}

    def _band(
        self,
        matches: _Matches,
        frame: np.ndarray,
        h_img: np.ndarray,
        center_mm: tuple[float, float],
        rotation: int,
        among: np.ndarray | None,
        angle: float,
        whole: bool = False,
    ) -> list[int]:
        """Add a top band's parts to ``matches``: their handles. The band of a card seen ``whole``
        is not covered by another card: it is matched in the first view alone (the whole band)."""
        m = 2 * SHIFT_MM
        ppm = self.band_ppm
        patch = self._prep(
            table_patch(frame, h_img, center_mm, (CARD_MM[0] + m, BAND_MM + m), ppm, rotation, angle), ppm
        )
        return self._band_parts(matches, patch, self.band_refs, among, len(self.band_cols) if whole else None)

    def _band_parts(
        self,
        matches: _Matches,
        patch: np.ndarray,
        band_refs: tuple[np.ndarray, ...],
        among: np.ndarray | None,
        first: int | None = None,
    ) -> list[int]:
        """Add the parts of a band patch (the band and the search margin round it) to ``matches``:
        each view's rows from the band's top and each part's columns, with the margin (only the
        ``first`` windows, when given)."""
        shift = patch.shape[1] - self.band_size[0]
        down = patch.shape[0] - self.band_size[1]
        return [
            matches.add(patch[: th + down, x0 : x1 + shift], x1 - x0, th, refs, among)
            for (th, x0, x1), refs in list(zip(self.band_windows, band_refs, strict=True))[:first]
        ]

    def band_scores(
        self,
        frame: np.ndarray,
        h_img: np.ndarray,
        center_mm: tuple[float, float],
        rotation: int,
        among: np.ndarray | None = None,
    ) -> np.ndarray:
        """Correlation of a top band (centre in mm) with every reference band (or those in ``among``):
        the mean of its parts' best correlations, each part shifted on its own, less the
        reference's :attr:`hubness`."""
        return self.scores(frame, h_img, [(center_mm, rotation, among, False)])[0]

    def identify_band(
        self, frame: np.ndarray, h_img: np.ndarray, center_mm: tuple[float, float], rotation: int
    ) -> Match:
        """Identify a stacked card from its visible top band."""
        return _match(self.band_scores(frame, h_img, center_mm, rotation))

    def card_scores(
        self,
        frame: np.ndarray,
        h_img: np.ndarray,
        center_mm: tuple[float, float],
        rotation: int,
        among: np.ndarray | None = None,
    ) -> np.ndarray:
        """Correlation of a whole card (centre in mm) with every reference (or those in ``among``):
        the face and its band averaged, at the best of the rotations searched."""
        return self.scores(frame, h_img, [(center_mm, rotation, among, True)])[0]

    def identify_card(
        self, frame: np.ndarray, h_img: np.ndarray, center_mm: tuple[float, float], rotation: int
    ) -> Match:
        """Identify a fully visible card (centre in mm) from the whole face and its band."""
        return _match(self.card_scores(frame, h_img, center_mm, rotation))


_WAITING = np.zeros(0, np.float32)  # a match whose product has not run yet (_Matches)


class _Matches:
    """Shifted-window matches collected (:meth:`add`), then run together (:meth:`run`): each
    reference's best correlation over every ``tw × th`` window of each patch (each 1 px shift),
    -inf for references not asked about. What ``Identifier._best(_windows(patch))`` gives, to
    float rounding (a few 1e-7), without normalising every window.

    A reference row ``r`` is zero-mean and unit-norm, so a window ``w``'s correlation with it is
    ``(w - mean(w)) · r / |w - mean(w)|  =  (w · r - mean(w) · sum(r)) / |w - mean(w)|``: one
    product of the raw windows with the references, then per window a scalar, whose sums come
    from the patch's integral images (float64). Normalising each window first was as costly as
    the product itself (issue 14, seventh round). The raw windows of all patches matched against
    one reference set under one mask go into one product. Each patch is centred on its own mean
    first (a constant changes no correlation) to keep float32 rounding small; a patch with a
    window nearly flat against its contrast, where that rounding would show, and the per-channel
    ``color_norm`` are matched with :meth:`Identifier._windows` and :meth:`Identifier._best`.
    """

    def __init__(self, identifier: Identifier) -> None:
        self.identifier = identifier
        self.done: list[np.ndarray] = []  # by handle; _WAITING: waits for its group's product
        #: Per (reference set, mask): the set, the mask and its patches' (handle, windows (a view
        #: of the patch: copied once, in :meth:`run`), window means, window norms).
        self.groups: dict[
            tuple[int, bytes | None],
            tuple[np.ndarray, np.ndarray | None, list[tuple[int, np.ndarray, np.ndarray, np.ndarray]]],
        ] = {}

    def add(self, patch: np.ndarray, tw: int, th: int, refs: np.ndarray, among: np.ndarray | None) -> int:
        """Ask for one patch's match against ``refs`` (those in ``among``); its handle in :meth:`run`."""
        handle = len(self.done)
        ident = self.identifier
        if ident.color_norm:
            self.done.append(ident._best(ident._windows(patch, tw, th), refs, among))
            return handle
        p = patch - patch.mean(dtype=np.float64).astype(np.float32)
        s1, s2 = _box_sums(p, tw, th)
        d = tw * th * (p.shape[2] if p.ndim == 3 else 1)
        mean = s1 / d
        norm = np.sqrt(np.maximum(s2 - s1 * mean, 0.0))
        if norm.min() <= FLAT_WINDOW * math.sqrt(s2.max()):  # <=: a blank patch too
            self.done.append(ident._best(ident._windows(patch, tw, th), refs, among))
            return handle
        view = np.lib.stride_tricks.sliding_window_view(p, (th, tw), axis=(0, 1))
        if p.ndim == 3:
            view = view.transpose(0, 1, 3, 4, 2)
        key = (id(refs), None if among is None else among.tobytes())
        self.groups.setdefault(key, (refs, among, []))[2].append((handle, view, mean, norm))
        self.done.append(_WAITING)
        return handle

    def run(self) -> list[np.ndarray]:
        """The matches asked for, by handle: one product per reference set and mask."""
        ident = self.identifier
        for refs, among, members in self.groups.values():
            if among is None:
                sub, sums = refs, refs.sum(axis=1, dtype=np.float64)
            else:
                sub, sums = ident._among(refs, among)
            # Every patch's windows copied once, straight into the product's rows (row-major over
            # the shifts, each window row-major: channels last), not into a copy of their own
            # that is then concatenated (a copy of a frame's windows, about 50 MB, saved).
            raws = np.empty((sum(len(m[2]) for m in members), sub.shape[1]), np.float32)
            row = 0
            for _, view, mean, _ in members:
                raws[row : row + len(mean)].reshape(view.shape)[...] = view
                row += len(mean)
            dots = raws @ sub.T
            row = 0
            for handle, _, mean, norm in members:
                mine = dots[row : row + len(mean)].astype(np.float64)
                row += len(mean)
                best = ((mine - mean[:, None] * sums[None, :]) / (norm[:, None] + 1e-6)).max(axis=0)
                if among is None:
                    self.done[handle] = best.astype(np.float32)
                else:
                    out = np.full(len(refs), -np.inf, np.float32)
                    out[among] = best
                    self.done[handle] = out
        self.groups = {}
        return list(self.done)


def _match(scores: np.ndarray, allowed: np.ndarray | None = None) -> Match:
    s = scores if allowed is None else np.where(allowed, scores, -np.inf)
    order = np.argsort(-s)
    runner_up = s[order[1]] if np.isfinite(s[order[1]]) else -1.0
    return Match(int(order[0]), float(s[order[0]]), float(s[order[0]] - runner_up))


def assign(
    scores: Sequence[np.ndarray], allowed: Sequence[np.ndarray], method: str = "optimal"
) -> list[Match]:
    """Identify several cards at once, each card id at most once, each within its candidate mask.

    ``optimal`` (shipped): the assignment with the highest total score (Hungarian method), so two
    places that want one card settle it by what both pictures say: a card just built that the
    referee's memory still expects in the Display goes where it matches best, and the Display
    slot takes the card that came from the deck. ``greedy``: the most certain card is settled
    first and leaves the table (what resolves a blurred band that looks like a card seen clearly
    elsewhere; both do that). A Starting Gizmo candidate takes the best score of the four (they
    are identical on real copies). Every row's mask must leave at least one card, or
    ``ValueError`` says which row. With more cards than candidates, the rows left over take
    their best card anyway.
    """
    n = len(scores)
    table = np.full((n, N_CARDS), -np.inf, np.float32)
    for i, (sc, ok) in enumerate(zip(scores, allowed, strict=True)):
        if not ok.any():
            raise ValueError(f"identification: no candidate card for detection {i}")
        row = np.where(ok, sc, -np.inf)
        start = ok[STARTING]
        if start.any():
            row[STARTING[start]] = sc[STARTING].max()
        table[i] = row
    if method == "greedy":
        return _greedy(table)
    if method != "optimal":
        raise ValueError(f"identification: unknown assignment method {method!r}")
    finite = np.isfinite(table)
    cost = np.where(finite, -table, IMPOSSIBLE).astype(np.float64)
    cards = _hungarian(cost) if n else np.zeros(0, int)
    out = []
    for i, card in enumerate(cards):
        if not finite[i, card]:  # more cards than candidates: this one takes its best anyway
            out.append(_match(table[i]))
            continue
        others = np.delete(cards, i)
        alternatives = table[i].copy()
        alternatives[others] = -np.inf
        alternatives[card] = -np.inf
        runner_up = float(alternatives.max()) if np.isfinite(alternatives.max()) else -1.0
        out.append(Match(int(card), float(table[i, card]), float(table[i, card] - runner_up)))
    return out


IMPOSSIBLE = 1e6  # the cost of a card outside a row's candidates (taken only when nothing else fits)


def _greedy(table: np.ndarray) -> list[Match]:
    n = len(table)
    out: list[Match | None] = [None] * n
    free = np.ones(N_CARDS, bool)
    for _ in range(n):
        live = np.where(free[None, :], table, -np.inf)
        live[[i for i in range(n) if out[i] is not None]] = -np.inf
        i, card = (int(v) for v in np.unravel_index(int(np.argmax(live)), live.shape))
        if not np.isfinite(live[i, card]):  # more cards than candidates left: fall back to the best
            for k in range(n):
                if out[k] is None:
                    out[k] = _match(table[k])
            break
        out[i] = _match(live[i])
        free[card] = False
    return [m for m in out if m is not None]


def _hungarian(cost: np.ndarray) -> np.ndarray:
    """The column of each row in the assignment of least total cost (rows <= columns): the
    shortest augmenting path form of the Hungarian method, O(rows² · columns)."""
    n, m = cost.shape
    u, v = np.zeros(n + 1), np.zeros(m + 1)
    p = np.zeros(m + 1, int)  # p[j]: the row (1-based) holding column j (1-based); 0: free
    way = np.zeros(m + 1, int)
    for i in range(1, n + 1):
        p[0], j0 = i, 0
        minv = np.full(m + 1, np.inf)
        used = np.zeros(m + 1, bool)
        while True:
            used[j0] = True
            i0 = p[j0]
            cur = cost[i0 - 1] - u[i0] - v[1:]
            free = ~used[1:]
            better = free & (cur < minv[1:])
            minv[1:][better] = cur[better]
            way[1:][better] = j0
            candidates = np.flatnonzero(free)
            j1 = int(candidates[np.argmin(minv[1:][candidates])]) + 1
            delta = minv[j1]
            taken = np.flatnonzero(used)
            u[p[taken]] += delta
            v[taken] -= delta
            minv[1:][free] -= delta
            j0 = j1
            if p[j0] == 0:
                break
        while j0:
            j1 = way[j0]
            p[j0] = p[j1]
            j0 = j1
    rows = np.zeros(n, int)
    for j in range(1, m + 1):
        if p[j]:
            rows[p[j] - 1] = j - 1
    return rows


# ------------------------------------------------------------------------ color from cards seen whole

#: Resolution and blur of the patches a color map is fitted on: the map is a property of the
#: lamp and the camera, smooth over the card, so coarse, blurred patches suffice and a few
#: millimetres of misalignment between the detected box and the card do not matter.
MAP_PPM = 0.5
MAP_BLUR_MM = 2.0
MAP_BORDER_MM = 6.0  # left out at the card's edge (placement, the table around it)
MIN_MAP_CARDS = 2  # fewer cards seen whole than this: no map (one wrong card would decide it)


def color_map(
    frame: np.ndarray,
    h_img: np.ndarray,
    cards: Sequence[tuple[tuple[float, float], int, np.ndarray]],
) -> np.ndarray | None:
    """The affine color map (3 × 4, BGR -> BGR) that takes this frame's colors to the reference
    faces', fitted on cards identified whole: ``(centre_mm, rotation, reference face)`` each.

    An enrolled deck was photographed under another lamp and camera than the table's; the cards
    the frame shows whole, identified with confidence, say how the two differ (a card that is
    seen keeps its identity, under the same light as its neighbours). Least squares on blurred
    patches, then once more without the worst fifth of pixels and any card that fits far worse
    than the others (a wrong identification). ``None`` when fewer than :data:`MIN_MAP_CARDS`
    cards are given or the map is implausible (a channel gain outside 0.5-2).
    """
    if len(cards) < MIN_MAP_CARDS:
        return None
    m = round(MAP_BORDER_MM * MAP_PPM)
    src, dst = [], []
    for centre, rotation, face in cards:
        sigma = MAP_BLUR_MM * MAP_PPM
        seen = table_patch(frame, h_img, centre, CARD_MM, MAP_PPM, rotation).astype(np.float32)
        src.append(cv2.GaussianBlur(seen, (0, 0), sigma)[m:-m, m:-m].reshape(-1, 3))
        dst.append(_map_reference(face))
    per_card = len(src[0])
    s = np.concatenate(src)
    x = np.c_[s, np.ones(len(s), np.float32)]
    d = np.concatenate(dst)
    keep = np.ones(len(x), bool)
    for _ in range(2):
        mat = np.linalg.lstsq(x[keep], d[keep], rcond=None)[0]
        err = np.abs(x @ mat - d).sum(axis=1)
        card_err = np.median(err.reshape(len(cards), per_card), axis=1)
        good_card = np.repeat(card_err <= 2 * np.median(card_err) + 3, per_card)
        keep = good_card & (err <= np.quantile(err[good_card], 0.8))
    mat = np.linalg.lstsq(x[keep], d[keep], rcond=None)[0].T.astype(np.float32)  # 3 x 4
    gains = np.diag(mat[:, :3])
    if not np.all((gains > 0.5) & (gains < 2.0)):
        return None
    return mat


#: A reference face's pixels as :func:`color_map` fits them, by the face array's id (the face is
#: kept with them, so the id is not reused while they are): the references change only when a
#: card is enrolled (a new array), and resizing and blurring them was a third of the map's time.
_MAP_REFERENCES: dict[int, tuple[np.ndarray, np.ndarray]] = {}


def _map_reference(face: np.ndarray) -> np.ndarray:
    """A reference face resized to the map's resolution, blurred, its border left out, as pixel rows."""
    kept = _MAP_REFERENCES.get(id(face))
    if kept is not None and kept[0] is face:
        return kept[1]
    m = round(MAP_BORDER_MM * MAP_PPM)
    ref = cv2.resize(face, _size(*CARD_MM, MAP_PPM), interpolation=cv2.INTER_AREA).astype(np.float32)
    rows = cv2.GaussianBlur(ref, (0, 0), MAP_BLUR_MM * MAP_PPM)[m:-m, m:-m].reshape(-1, 3)
    if len(_MAP_REFERENCES) >= 4 * N_CARDS:  # enrolments replace faces: forget the old ones
        _MAP_REFERENCES.clear()
    _MAP_REFERENCES[id(face)] = (face, rows)
    return rows


def apply_color_map(frame: np.ndarray, mat: np.ndarray) -> np.ndarray:
    """The frame with a :func:`color_map` applied (a new image)."""
    return cv2.transform(frame, mat)
