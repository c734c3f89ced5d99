"""The learned card embedding: its training views, the network's input, bad files, training."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from referee.gizmos.cards import default_cards
from vision.embedding import (
    BACKENDS,
    INPUT_SIZE,
    PATCH_PPM,
    REFERENCE_TURNS_DEG,
    REGION_MM,
    CardEmbedder,
    input_size,
    patch_input,
    reference_input,
    turned,
)
from vision.errors import ModelFileError
from vision.faces import BAND_MM, CARD_MM, FACE_H, FACE_PX_PER_MM, FACE_W, N_CARDS, drawn_faces
from vision.geometry import table_patch
from vision.identify import EMBEDDING_REFERENCE_BLUR_MM, LEVELS, Identifier
from vision.observe import Assembler
from vision.training.embedding import (
    VIEWS,
    EmbedTrainConfig,
    Views,
    camera_patch,
    combine_embeddings,
    enrolment_face,
    export_embedding,
    main,
    smoke_embedding,
    to_tensor_array,
    top1_among_level,
    train_embedding,
    view_pairs,
)
from vision.training.evaluate import content, layout_memory, oracle_detections, scene_for_seed
from vision.training.randomise import lookalike_random_deck, random_deck, varied_random_deck
from vision.training.synth import RenderSettings, random_layout, render_table

DECK = 6_999_999  # a random deck no training step draws (training: 6,000,000 + step)


def _corr(a: np.ndarray, b: np.ndarray) -> float:
    x, y = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    return float(np.corrcoef(x, y)[0, 1])


def test_enrolment_photo_is_the_card_degraded_and_deterministic() -> None:
    deck = random_deck(DECK)
    a = enrolment_face(deck[5], np.random.default_rng(1))
    assert a.shape == (FACE_H, FACE_W, 3) and a.dtype == np.uint8
    assert np.array_equal(a, enrolment_face(deck[5], np.random.default_rng(1)))
    assert not np.array_equal(a, deck[5])
    # Still the card: closer to its own face than to any other card's of the deck, per seed.
    for seed in range(6):
        photo = enrolment_face(deck[5], np.random.default_rng(seed))
        own = _corr(photo, deck[5])
        assert own > 0.5
        assert own > max(_corr(photo, deck[c]) for c in range(len(deck)) if c != 5)


@pytest.mark.parametrize("kind", ["band", "face"])
def test_camera_patch_has_the_pipelines_patch_size(kind: str) -> None:
    deck = random_deck(DECK)
    patch = camera_patch(deck[0], deck[1], np.random.default_rng(3), kind)
    w, h = REGION_MM[kind]
    assert patch.shape == (round(h * PATCH_PPM[kind]), round(w * PATCH_PPM[kind]), 3)
    assert patch_input(patch, kind).shape == (INPUT_SIZE[kind][1], INPUT_SIZE[kind][0], 3)
    assert reference_input(deck[0], kind).shape == patch_input(patch, kind).shape


def test_the_next_card_covers_the_bands_lower_edge() -> None:
    face = np.full((FACE_H, FACE_W, 3), 230, np.uint8)
    black = np.zeros_like(face)
    covered, bare = [], []
    for seed in range(12):
        covered.append(camera_patch(face, black, np.random.default_rng(seed), "band")[-4:].mean())
        bare.append(camera_patch(face, None, np.random.default_rng(seed), "band")[-4:].mean())
    # The cover's top edge lies 5 mm above to 2 mm below the band's lower edge: the bottom 4 mm
    # are mostly dark with it, light without it.
    assert np.median(covered) < 0.6 * np.median(bare)


def test_a_card_casts_its_thickness_shadow_under_the_wide_views() -> None:
    # With and without the shadow the views draw the same random numbers: the patches differ by
    # the shadow alone, which only darkens.
    deck = random_deck(DECK)
    shaded, plain = replace(VIEWS["wide"], shadow=1.0), replace(VIEWS["wide"], shadow=1e-12)
    darker = []
    for seed in range(6):
        a = camera_patch(deck[3], deck[4], np.random.default_rng(seed), "band", shaded).astype(float)
        b = camera_patch(deck[3], deck[4], np.random.default_rng(seed), "band", plain).astype(float)
        assert a.shape == b.shape
        darker.append(float(np.percentile(b - a, 99)))
        assert (b - a).mean() > 0
    assert max(darker) > 25  # a dark strip where the shadow falls clear of the card
    # v1 is the first recipe's views: nothing is drawn for what it leaves at 0
    v1 = camera_patch(deck[3], deck[4], np.random.default_rng(0), "band")
    assert np.array_equal(v1, camera_patch(deck[3], deck[4], np.random.default_rng(0), "band", Views()))


def test_a_lookalike_deck_shares_its_templates() -> None:
    deck = lookalike_random_deck(DECK)
    assert all(np.array_equal(a, b) for a, b in zip(deck, lookalike_random_deck(DECK), strict=True))
    cards = default_cards()
    same = [c.id for c in cards if (c.color, c.type) == (cards[40].color, cards[40].type)]
    a, b = deck[same[0]], deck[same[1]]
    middle = slice(FACE_H // 2 - 10, FACE_H // 2 + 10)  # the shared picture
    assert np.array_equal(a[middle], b[middle])
    assert not np.array_equal(a[:40], b[:40])  # the title band tells them apart
    other = next(c.id for c in cards if c.color != cards[40].color)
    assert not np.array_equal(a[middle], deck[other][middle])


def test_a_deck_of_a_random_design_is_one_design_of_different_cards() -> None:
    deck = varied_random_deck(DECK)
    assert len(deck) == N_CARDS and deck[0].shape == (FACE_H, FACE_W, 3)
    assert all(np.array_equal(a, b) for a, b in zip(deck, varied_random_deck(DECK), strict=True))
    # one design: the cards' frames (the outer 2 px) agree within a colour, the cards differ
    reds = [f for f, c in zip(deck, default_cards(), strict=True) if c.color == "red"]
    assert np.array_equal(reds[0][:2, :2], reds[1][:2, :2])
    assert not np.array_equal(reds[0], reds[1])
    # another deck, another design
    other = varied_random_deck(DECK + 1)
    assert not np.array_equal(deck[0][:2, :2], other[0][:2, :2])


def test_the_training_recipe_rejects_unknown_views(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ValueError, match="views must be one of"):
        train_embedding(EmbedTrainConfig(tmp_path / "run", views="fisheye"))
    with pytest.raises(SystemExit) as exc:
        main(["train", "--views", "fisheye", "--out", str(tmp_path / "run")])
    assert exc.value.code == 2
    assert "invalid choice: 'fisheye'" in capsys.readouterr().err
    with pytest.raises(ValueError, match=r"together at most 0\.9"):
        train_embedding(EmbedTrainConfig(tmp_path / "run", lookalike=0.5, varied=0.5))
    assert main(["train", "--varied", "-0.1", "--out", str(tmp_path / "run")]) == 2
    assert "must be >= 0" in capsys.readouterr().out


def test_a_finer_network_takes_patches_cut_finer() -> None:
    # Scale 2: the band cut at 2 px/mm, the network's input twice the size each way.
    deck = random_deck(DECK)
    patch = camera_patch(deck[0], deck[1], np.random.default_rng(3), "band", VIEWS["fine"], scale=2)
    w, h = REGION_MM["band"]
    assert patch.shape == (round(h * 2 * PATCH_PPM["band"]), round(w * 2 * PATCH_PPM["band"]), 3)
    assert input_size("band", 2) == (2 * INPUT_SIZE["band"][0], 2 * INPUT_SIZE["band"][1])
    a, p = view_pairs(deck, np.array([0, 7]), np.random.default_rng(0), "band", VIEWS["fine"], scale=2)
    assert a.shape == p.shape == (2, input_size("band", 2)[1], input_size("band", 2)[0], 3)
    assert VIEWS["fine"].camera_ppm[1] > VIEWS["wide"].camera_ppm[1]


def _image_network(path: Path, size: tuple[int, int], scale: float = 1.0) -> Path:
    """A stand-in embedding network without torch: the mean of each colour plane, times ``scale``
    (a 3-d output of input (w, h) ``size``)."""
    import onnx
    from onnx import TensorProto, helper

    w, h = size

    def constant(name: str, kind: int, values: list[float] | list[int]) -> onnx.NodeProto:
        return helper.make_node(
            "Constant", [], [name], value=helper.make_tensor(name, kind, [len(values)], values)
        )

    nodes = [
        constant("axes", TensorProto.INT64, [2, 3]),
        helper.make_node("ReduceMean", ["image", "axes"], ["m"], keepdims=0),
        constant("k", TensorProto.FLOAT, [scale]),
        helper.make_node("Mul", ["m", "k"], ["embedding"]),
    ]
    graph = helper.make_graph(
        nodes,
        "stand_in",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["n", 3, h, w])],
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["n", 3])],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)]), str(path))
    return path


def test_the_network_file_says_its_resolution(tmp_path: Path) -> None:
    fine = CardEmbedder(_image_network(tmp_path / "fine.onnx", input_size("band", 2)))
    assert (fine.scale, fine.patch_ppm) == (2, 2 * PATCH_PPM["band"])
    assert fine.references(drawn_faces()[:2]).shape == (2, 3)
    assert CardEmbedder().scale == 1
    with pytest.raises(
        ModelFileError, match=r"its input is 64x21 px, not a whole multiple of the band network's 64x20"
    ):
        CardEmbedder(_image_network(tmp_path / "odd.onnx", (64, 21)))


def test_combined_networks_give_the_mean_of_their_cosines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # One vector per face (no reference turns): the mean of turned vectors is normalised per
    # network alone and for the ensemble as a whole, which differ by a little.
    committed = CardEmbedder(turns=(0.0,))
    other = _image_network(tmp_path / "other.onnx", INPUT_SIZE["band"])
    both = CardEmbedder(combine_embeddings([committed.path, other], tmp_path / "both.onnx"), turns=(0.0,))
    faces = list(random_deck(DECK)[:6])
    a, b = committed.references(faces), CardEmbedder(other, turns=(0.0,)).references(faces)
    v = both.references(faces)
    assert v.shape == (6, a.shape[1] + b.shape[1])
    assert np.abs(v @ v.T - (a @ a.T + b @ b.T) / 2).max() < 1e-5
    # Bad members: one clear line, exit 2.
    assert main(["combine", str(other), "--out", str(tmp_path / "x.onnx")]) == 2
    assert "at least two networks" in capsys.readouterr().out
    assert main(["combine", str(other), str(tmp_path / "none.onnx"), "--out", str(tmp_path / "x.onnx")]) == 2
    assert "none.onnx not found" in capsys.readouterr().out
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a network")
    assert main(["combine", str(other), str(bad), "--out", str(tmp_path / "x.onnx")]) == 2
    assert "bad.onnx is not an ONNX file" in capsys.readouterr().out
    odd = _image_network(tmp_path / "odd.onnx", (64, 21))
    assert main(["combine", str(other), str(odd), "--out", str(tmp_path / "x.onnx")]) == 2
    assert "takes 64x20, not a whole fraction of 64x21" in capsys.readouterr().out
    assert not (tmp_path / "x.onnx").exists()


def test_a_coarser_member_sees_the_finer_input_averaged_down(tmp_path: Path) -> None:
    # A scale-1 network beside a scale-2 one: the ensemble takes scale-2 patches; the scale-1
    # member sees them averaged 2 x 2 (the stand-ins' plane means are the same either way).
    coarse = _image_network(tmp_path / "coarse.onnx", INPUT_SIZE["band"])
    fine = _image_network(tmp_path / "fine.onnx", input_size("band", 2), scale=-1.0)
    both = CardEmbedder(combine_embeddings([coarse, fine], tmp_path / "both.onnx"))
    assert (both.scale, both.patch_ppm) == (2, 2 * PATCH_PPM["band"])
    faces = list(random_deck(DECK)[:6])
    a, b = CardEmbedder(coarse).references(faces), CardEmbedder(fine).references(faces)
    v = both.references(faces)
    assert np.allclose(a, -b, atol=1e-3)  # the stand-ins: one the other's opposite
    assert np.abs(v @ v.T - (a @ a.T + b @ b.T) / 2).max() < 1e-3
    halves = v * np.sqrt(2)  # each member's unit vector, the whole normalised again
    assert np.allclose(halves[:, :3], a, atol=1e-3) and np.allclose(halves[:, 3:], b, atol=1e-3)


def test_view_pairs_and_the_network_input() -> None:
    deck = random_deck(DECK)
    a, p = view_pairs(deck, np.array([0, 7, 9]), np.random.default_rng(0), "band")
    w, h = INPUT_SIZE["band"]
    assert a.shape == p.shape == (3, h, w, 3) and a.dtype == np.uint8
    t = to_tensor_array(a)
    assert t.shape == (3, 3, h, w) and t.dtype == np.float32 and t.min() >= 0 and t.max() <= 1
    assert np.allclose(t[0, 0], a[0, :, :, 2] / 255.0)  # RGB planes, as blobFromImages(swapRB)


def test_top1_among_level_counts_right_cards() -> None:
    v = np.eye(112, dtype=np.float32)
    assert top1_among_level(v, v) == 1.0
    assert top1_among_level(v, np.roll(v, 1, axis=0)) < 0.1


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_model_files_and_inputs_are_clear_errors(tmp_path: Path, backend: str) -> None:
    with pytest.raises(ModelFileError, match=r"card embedding model file .*missing\.onnx not found"):
        CardEmbedder(tmp_path / "missing.onnx", backend=backend)
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not a network")
    with pytest.raises(ModelFileError, match=r"card embedding model: cannot load .*broken\.onnx: \S"):
        CardEmbedder(broken, backend=backend)
    with pytest.raises(ValueError, match="backend must be one of"):
        CardEmbedder(backend="tensorrt")
    with pytest.raises(ValueError, match="kind must be one of"):
        reference_input(drawn_faces()[0], "corner")
    with pytest.raises(ModelFileError, match=r"embedding weights file .*missing\.pt not found"):
        export_embedding(tmp_path / "missing.pt", tmp_path / "out.onnx")
    with pytest.raises(ModelFileError, match="nothing to resume"):
        train_embedding(EmbedTrainConfig(tmp_path / "run"), resume=True)


def test_both_runtimes_give_the_committed_networks_vectors() -> None:
    # OpenVINO (shipped: a third of OpenCV DNN's CPU time) and OpenCV's DNN module run the same
    # exported network: the same unit vectors to float rounding, in batches of any size.
    rng = np.random.default_rng(5)
    faces = list(random_deck(DECK)[:70])
    patches = [(rng.random((20, 63, 3)) * 255).astype(np.uint8) for _ in range(3)]
    fast, before = CardEmbedder(), CardEmbedder(backend="opencv")
    assert fast.backend == "openvino"
    for a, b in (
        (fast.references(faces), before.references(faces)),
        (fast.patches(patches), before.patches(patches)),
    ):
        assert a.shape == b.shape and a.shape[1] == 3 * 64  # the committed ensemble: three networks of 64
        assert np.abs(a - b).max() < 1e-5
        assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    # A card's vector does not depend on the batch it is computed in.
    assert np.abs(fast.references(faces[:1]) - fast.references(faces)[:1]).max() < 1e-6


def test_a_reference_is_the_mean_of_its_face_turned() -> None:
    # REFERENCE_TURNS_DEG: each reference vector is the normalised mean of the face's vectors at
    # the turns; (0.0,) is the face alone, as the embedding was read before.
    faces = list(random_deck(DECK)[:4])
    alone, turned3 = CardEmbedder(turns=(0.0,)), CardEmbedder()
    assert turned3.turns == REFERENCE_TURNS_DEG and len(REFERENCE_TURNS_DEG) > 1
    a = alone.references(faces)
    assert np.allclose(a, alone.embed([reference_input(f, "band") for f in faces]), atol=1e-6)
    parts = [alone.embed([reference_input(turned(f, t), "band") for f in faces]) for t in REFERENCE_TURNS_DEG]
    mean = sum(parts)
    assert isinstance(mean, np.ndarray)
    mean = mean / np.linalg.norm(mean, axis=1, keepdims=True)
    v = turned3.references(faces)
    assert np.abs(v - mean).max() < 1e-5
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert np.abs(v - a).max() > 1e-3  # the turns change the vector ...
    assert ((v * a).sum(axis=1) > 0.9).all()  # ... but it is still the card's
    with pytest.raises(ValueError, match="reference turn"):
        CardEmbedder(turns=())


def test_a_turned_face_keeps_its_size_and_its_centre() -> None:
    face = random_deck(DECK)[3]
    assert turned(face, 0.0) is face
    t = turned(face, 2.0)
    assert t.shape == face.shape and t.dtype == face.dtype
    h, w = face.shape[:2]
    c = (slice(h // 2 - 8, h // 2 + 8), slice(w // 2 - 8, w // 2 + 8))
    assert _corr(t[c], face[c]) > 0.9  # about its centre: the middle hardly moves
    assert _corr(t[:40], face[:40]) < _corr(t[c], face[c])  # the band, far from it, moves most


class _OneCard(CardEmbedder):
    """An embedding without a network: reference ``i`` of a set is unit vector ``i``, and every
    camera patch is card ``card``'s vector (so only that card's band scores move)."""

    def __init__(self, card: int = 7) -> None:
        self.kind, self.card = "band", card
        self.scale, self.patch_ppm = 1, PATCH_PPM["band"]
        self.asked = 0

    def references(self, faces: Sequence[np.ndarray]) -> np.ndarray:
        return np.eye(len(faces), N_CARDS, dtype=np.float32)

    def patches(self, patches: Sequence[np.ndarray]) -> np.ndarray:
        self.asked += len(patches)
        return np.tile(np.eye(1, N_CARDS, self.card, dtype=np.float32), (len(patches), 1))


class _Sharpness(_OneCard):
    """An embedding whose reference vector is the face's sharpness (its Laplacian's variance)."""

    def references(self, faces: Sequence[np.ndarray]) -> np.ndarray:
        v = np.zeros((len(faces), N_CARDS), np.float32)
        v[:, 0] = [cv2.Laplacian(cv2.cvtColor(f, cv2.COLOR_BGR2GRAY), cv2.CV_32F).var() for f in faces]
        return v


def test_the_embedding_reads_reference_faces_as_soft_as_a_camera_sees_them() -> None:
    faces = drawn_faces()
    sharp = Identifier(embedding=_Sharpness(), reference_blur_mm=0.0)
    soft = Identifier(embedding=_Sharpness())
    assert sharp.band_vectors is not None and soft.band_vectors is not None
    assert np.all(soft.band_vectors[:, 0] < 0.5 * sharp.band_vectors[:, 0])
    blurred = cv2.GaussianBlur(faces[3], (0, 0), EMBEDDING_REFERENCE_BLUR_MM * FACE_PX_PER_MM)
    assert soft.band_vectors[3, 0] == pytest.approx(_Sharpness().references([blurred])[0, 0])
    # A face enrolled later is read the same way.
    for ident in (sharp, soft):
        ident.enrol(9, faces[3])
        assert ident.band_vectors is not None
        assert ident.band_vectors[9, 0] == pytest.approx(ident.band_vectors[3, 0])
    with pytest.raises(ValueError, match="need an embedding"):
        Identifier().reference_vectors(faces)


def test_the_identifier_adds_the_embedding_to_bands_seen_alone_only() -> None:
    scene = render_table(random_layout(np.random.default_rng(12), 4), 12, RenderSettings(hand_prob=0))
    stub = _OneCard()
    plain = Identifier()
    learned = Identifier(embedding=stub, embedding_weight=0.3, embedding_whole=0.0)
    places = []
    for i, o in enumerate(o for o in scene.objects if o.cls in ("card", "card_band")):
        c = ((o.box_mm[0] + o.box_mm[2]) / 2, (o.box_mm[1] + o.box_mm[3]) / 2)
        places.append((c, 0, (None, LEVELS > 0)[i % 2], o.cls == "card"))
    bands = sum(not p[3] for p in places)
    assert bands > 3 and len(places) > bands
    want = plain.scores(scene.image, scene.homography, places)
    got = learned.scores(scene.image, scene.homography, places)
    assert stub.asked == bands  # one batch: the bands seen alone
    bonus = np.where(np.arange(N_CARDS) == 7, 0.3, 0.0)
    for (*_, whole), w, g in zip(places, want, got, strict=True):
        assert np.array_equal(np.isfinite(w), np.isfinite(g))
        ok = np.isfinite(w)
        assert np.allclose(g[ok], (w if whole else w + bonus)[ok], atol=1e-6)
    # Enrolling a card gives it the embedding of its new face.
    learned.enrol(9, drawn_faces()[3])
    assert learned.band_vectors is not None and learned.band_vectors[9].argmax() == 0


class _Keeper(_OneCard):
    """An embedding that keeps the camera patches it is given."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[np.ndarray] = []

    def patches(self, patches: Sequence[np.ndarray]) -> np.ndarray:
        self.seen.extend(patches)
        return super().patches(patches)


def test_a_card_seen_whole_adds_its_top_bands_cosine_when_asked() -> None:
    scene = render_table(random_layout(np.random.default_rng(12), 4), 12, RenderSettings(hand_prob=0))
    stub = _OneCard()
    plain = Identifier()
    both = Identifier(embedding=stub, embedding_weight=0.3, embedding_whole=0.2)
    places = [
        (((o.box_mm[0] + o.box_mm[2]) / 2, (o.box_mm[1] + o.box_mm[3]) / 2), 0, None, o.cls == "card")
        for o in scene.objects
        if o.cls in ("card", "card_band")
    ]
    want = plain.scores(scene.image, scene.homography, places)
    got = both.scores(scene.image, scene.homography, places)
    assert stub.asked == len(places)  # the whole cards' bands too, in the same batch
    card7 = np.arange(N_CARDS) == 7
    for (*_, whole), w, g in zip(places, want, got, strict=True):
        assert np.allclose(g, w + np.where(card7, 0.2 if whole else 0.3, 0.0), atol=1e-6)
    assert both.memory_scale(True) == pytest.approx(1.2) and both.memory_scale(False) == pytest.approx(1.3)
    assert Identifier(embedding=stub, embedding_whole=0.0).memory_scale(True) == 1.0
    # The whole card's patch is its top band: cut where the band of a card seen whole lies.
    keeper = _Keeper()
    (cx, cy), *_ = next(p for p in places if p[3])
    Identifier(embedding=keeper).scores(scene.image, scene.homography, [((cx, cy), 0, None, True)])
    up = (CARD_MM[1] - BAND_MM) / 2
    top = table_patch(scene.image, scene.homography, (cx, cy - up), REGION_MM["band"], PATCH_PPM["band"], 0)
    assert len(keeper.seen) == 1 and np.array_equal(keeper.seen[0], top)


@pytest.mark.slow
def test_smoke_training_exports_a_network_the_identifier_side_loads(tmp_path: Path) -> None:
    import torch

    from vision.training.embedding import build_net

    onnx = smoke_embedding(tmp_path, threads=2)
    assert (tmp_path / "run" / "log.jsonl").read_text().count("\n") == 2
    net = CardEmbedder(onnx, "band")
    refs = CardEmbedder(onnx, "band", turns=(0.0,)).references(drawn_faces()[:5])  # torch's one view
    assert refs.shape == (5, 64)
    assert np.allclose(np.linalg.norm(refs, axis=1), 1.0, atol=1e-4)
    with pytest.raises(ValueError, match="takes 64x20"):
        net.embed([np.zeros((10, 10, 3), np.uint8)])
    # The exported network is the trained one: OpenCV's output equals torch's on the same input.
    ck = torch.load(tmp_path / "run" / "best.pt", weights_only=False)
    tnet = build_net("band")
    tnet.load_state_dict(ck["net"])
    tnet.eval()
    images = np.stack([reference_input(f, "band") for f in drawn_faces()[:5]])
    with torch.no_grad():
        want = tnet(torch.from_numpy(to_tensor_array(images))).numpy()
    assert np.allclose(refs, want, atol=1e-4)
    # The identifier takes it: its band scores move by the weighted cosine, nothing else.
    ident = Identifier(embedding=net, embedding_weight=0.5)
    soft = [cv2.GaussianBlur(f, (0, 0), EMBEDDING_REFERENCE_BLUR_MM * FACE_PX_PER_MM) for f in drawn_faces()]
    assert ident.band_vectors is not None and np.allclose(ident.band_vectors, net.references(soft))
    # Resuming a finished run trains nothing more and keeps the same best weights.
    cfg = EmbedTrainConfig(tmp_path / "run", epochs=2, steps=2, cards=16)
    assert train_embedding(cfg, resume=True) == tmp_path / "run" / "best.pt"
    assert (tmp_path / "run" / "log.jsonl").read_text().count("\n") == 2


@pytest.mark.slow
def test_a_wider_network_on_wide_views_and_other_decks_exports_its_width(tmp_path: Path) -> None:
    cfg = EmbedTrainConfig(tmp_path / "run", epochs=1, steps=2, cards=8, views="wide", lookalike=0.5, width=8)
    best = train_embedding(cfg)
    onnx = export_embedding(best, tmp_path / "band.onnx")
    refs = CardEmbedder(onnx, "band").references(drawn_faces()[:3])
    assert refs.shape == (3, 64) and np.allclose(np.linalg.norm(refs, axis=1), 1.0, atol=1e-4)


@pytest.mark.slow
def test_a_finer_network_trains_and_exports_its_resolution(tmp_path: Path) -> None:
    cfg = EmbedTrainConfig(
        tmp_path / "run", epochs=1, steps=1, cards=8, views="fine", varied=0.5, width=8, scale=2
    )
    net = CardEmbedder(export_embedding(train_embedding(cfg), tmp_path / "band.onnx"))
    assert (net.scale, net.patch_ppm) == (2, 2.0)
    refs = net.references(drawn_faces()[:3])
    assert refs.shape == (3, 64) and np.allclose(np.linalg.norm(refs, axis=1), 1.0, atol=1e-4)
    with pytest.raises(ValueError, match="scale must be 1 or more"):
        train_embedding(replace(cfg, scale=0))


def test_a_table_reads_bands_with_the_embedding_enrolled_or_drawn(tmp_path: Path) -> None:
    # A real deck is always enrolled (its art is never shipped); the project's drawn faces'
    # top bands are read with the embedding too, their whole cards by the template alone
    # (docs/vision.md, "Fifteenth round"): each identifier holds the embedding of its own references.
    # An enrolled deck's bands lean on the embedding more ("Twenty-second round").
    from vision.identify import EMBEDDING_WEIGHT, EMBEDDING_WEIGHT_ENROLLED, EMBEDDING_WHOLE
    from vision.observe import Observer

    enrolled = Observer(seats=(0, 1), color_stage=False, boxes=lambda frame_no: [], enrol_dir=str(tmp_path))
    drawn = Observer(seats=(0, 1), color_stage=False, boxes=lambda frame_no: [])
    for observer in (enrolled, drawn):
        ident = observer.identifier
        assert ident.embedding is not None and ident.band_vectors is not None
        assert ident.band_vectors.shape[0] == len(ident.faces)
    assert (enrolled.identifier.embedding_whole, drawn.identifier.embedding_whole) == (EMBEDDING_WHOLE, 0.0)
    weights = (enrolled.identifier.embedding_weight, drawn.identifier.embedding_weight)
    assert weights == (EMBEDDING_WEIGHT_ENROLLED, EMBEDDING_WEIGHT)
    assert EMBEDDING_WEIGHT_ENROLLED > EMBEDDING_WEIGHT


def test_the_memorys_bonus_for_a_band_alone_grows_with_the_embedding() -> None:
    # Every band's embedding says "card X" (an unseen card of a type some column holds as a band)
    # with weight 5: more than any correlation can make up. The memory's bonus (0.25) alone
    # cannot hold the column's bands; scaled by 1 + embedding_memory x weight it can, and a card
    # seen whole or an identifier without the embedding keeps the plain bonus.
    scene = scene_for_seed(9_300_001)
    memory = layout_memory(scene.layout)
    band = next(o for o in scene.objects if o.cls == "card_band" and o.card is not None and o.card >= 4)
    kind = default_cards()[band.card].type
    x = next(c for c in sorted(memory.unseen) if default_cards()[c].type == kind)
    seats = tuple(p.seat for p in scene.layout.players)
    truth = content(scene.truth)

    def read(embedding_memory: float, know: bool) -> dict[str, object]:
        ident = Identifier(
            embedding=_OneCard(x),
            embedding_weight=5.0,
            embedding_memory=embedding_memory,
            embedding_whole=0.0,
        )
        assembler = Assembler(identifier=ident)
        assembler.know(memory if know else None)
        return content(assembler.assemble(scene.image, scene.homography, oracle_detections(scene), seats))

    assert read(0.0, know=True) != truth  # the plain bonus: the embedding wins a band for X
    assert read(10.0, know=False) != truth  # no memory, no bonus to scale
    assert read(10.0, know=True) == truth  # 0.25 x (1 + 10 x 5) holds every band
    ident = Identifier(
        embedding=_OneCard(x), embedding_weight=5.0, embedding_memory=10.0, embedding_whole=0.0
    )
    assert ident.memory_scale(whole=False) == 51.0 and ident.memory_scale(whole=True) == 1.0
    assert Identifier(embedding_memory=10.0).memory_scale(whole=False) == 1.0


def test_the_color_mapped_pass_reuses_the_embeddings_cosines() -> None:
    """The frame is scored twice (before and after the cards' color map) and embedded once."""
    scene = render_table(random_layout(np.random.default_rng(5), 2), 5, RenderSettings(hand_prob=0))
    cast = np.array([[0.8, 0, 0, 10], [0, 1.0, 0, 0], [0, 0, 1.25, -5]], np.float32)
    frame = cv2.transform(scene.image, cast)
    stub = _OneCard()
    assembler = Assembler(identifier=Identifier(embedding=stub, embedding_whole=0.2))
    seats = tuple(p.seat for p in scene.layout.players)
    assembler.assemble(frame, scene.homography, oracle_detections(scene), seats)
    assert assembler.last_color_map is not None  # the second pass ran
    cards = sum(o.cls in ("card", "card_band") and o.visible for o in scene.objects)
    assert stub.asked == cards == len(assembler.last_cards)


def test_the_color_mapped_pass_scores_only_the_cards_the_first_was_unsure_of(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import vision.observe as observe

    scene = render_table(random_layout(np.random.default_rng(5), 2), 5, RenderSettings(hand_prob=0))
    cast = np.array([[0.8, 0, 0, 10], [0, 1.0, 0, 0], [0, 0, 1.25, -5]], np.float32)
    frame = cv2.transform(scene.image, cast)
    seats = tuple(p.seat for p in scene.layout.players)

    def passes(rescore_below: float) -> list[int]:
        """How many cards each call of the identifier scored."""
        monkeypatch.setattr(observe, "RESCORE_BELOW", rescore_below)
        assembler = Assembler()
        calls: list[int] = []
        scores = assembler.identifier.scores

        def counted(*args: object, **kwargs: object) -> list[np.ndarray]:
            calls.append(len(args[2]))  # type: ignore[arg-type]
            return scores(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(assembler.identifier, "scores", counted)
        assembler.assemble(frame, scene.homography, oracle_detections(scene), seats)
        assert assembler.last_color_map is not None
        return calls

    every = passes(2.0)  # every card is scored again (the rule before)
    assert len(every) == 2 and every[0] == every[1] > 10
    none = passes(0.0)  # no card is unsure: no second pass
    assert none == [every[0]]
    some = passes(observe.RESCORE_BELOW)
    assert some[0] == every[0] and (len(some) == 1 or some[1] < every[0])


def test_soft_views_blur_each_enrolment_view_as_the_identifier_blurs_a_reference() -> None:
    """``soft`` is ``wide`` with the identifier's reference blur on every enrolment view (and
    the same random draws, so the views are otherwise the same)."""
    face = drawn_faces()[5]
    wide = enrolment_face(face, np.random.default_rng(3), VIEWS["wide"])
    soft = enrolment_face(face, np.random.default_rng(3), VIEWS["soft"])
    want = cv2.GaussianBlur(wide, (0, 0), EMBEDDING_REFERENCE_BLUR_MM * FACE_PX_PER_MM)
    assert VIEWS["soft"].reference_blur_mm == EMBEDDING_REFERENCE_BLUR_MM > 0
    assert np.array_equal(soft, want)
