"""``gizmos-referee vision ...``: faces, enrolment check, synthesis, dataset, training, calibration, observe.

Every command prints a one-line error (exit status 2) for bad input instead of a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from referee.app.settings import Settings
from vision.errors import DatasetError, VisionError

#: The detector (YOLOv8n) has 22 layers; --freeze leaves at least its detection head to train.
FREEZE_MAX = 21


def _randomise_option(parser: argparse.ArgumentParser, help: str) -> None:
    """``--randomise [LOOK]``: off by default, the latest randomised look when given bare."""
    from vision.training.randomise import LATEST_LOOK, LOOKS

    parser.add_argument(
        "--randomise",
        type=int,
        nargs="?",
        const=LATEST_LOOK,
        default=0,
        choices=list(LOOKS),
        metavar="LOOK",
        help=help,
    )


def _small_network(
    sub: argparse._SubParsersAction[Any], name: str, one: str, what: str, train: int, val: int, epochs: int
) -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """The three commands of each small network (``ONE-set``, ``train-NAME``, ``export-NAME``), its
    data in ``data/NAME``, its runs in ``runs/NAME``; returns the set's and the training's parsers."""
    s = sub.add_parser(f"{one}-set", help=f"render the {what}'s training set (resumable)")
    s.add_argument("--out", type=Path, default=Path(f"data/{name}"), help="dataset folder")
    s.add_argument("--train", type=int, default=train, help="training scenes")
    s.add_argument("--val", type=int, default=val, help="validation scenes")
    s.add_argument("--workers", type=int, default=2, help="rendering processes")
    t = sub.add_parser(f"train-{name}", help=f"train the {what} (progress per epoch; --resume continues)")
    t.add_argument("--data", type=Path, default=Path(f"data/{name}"), help=f"dataset folder (from {one}-set)")
    t.add_argument("--out", type=Path, default=Path(f"runs/{name}"), help="run folder")
    t.add_argument("--epochs", type=int, default=epochs, help="training epochs")
    t.add_argument("--threads", type=int, default=2, help="torch threads")
    t.add_argument("--resume", action="store_true", help="continue the interrupted run")
    t.add_argument("--smoke", type=Path, help="one epoch on a few scenes rendered into this folder (CI)")
    x = sub.add_parser(f"export-{name}", help=f"export the trained {what}'s weights to ONNX")
    x.add_argument("--weights", type=Path, default=Path(f"runs/{name}/best.pt"), help="trained weights")
    x.add_argument("--out", type=Path, default=None, help=f"ONNX file (default: models/{name}.onnx)")
    return s, t


def add_commands(sub: argparse._SubParsersAction[Any]) -> None:
    """The ``vision`` commands, added to ``gizmos-referee vision``'s subparsers."""
    f = sub.add_parser("faces", help="write the card faces in use as PNGs")
    f.add_argument("--out", type=Path, default=Path("data/faces"), help="folder to write the faces to")
    f.add_argument("--enrol", type=Path, help="enrolment folder (else $GIZMOS_ENROL_DIR, else drawn faces)")
    e = sub.add_parser("enrol-check", help="check a folder of enrolled card photos named by card id")
    e.add_argument("folder", type=Path, help="folder of card photos named by card id")
    es = sub.add_parser(
        "enrol-spread",
        help="enrol cards from a photo of them spread on the calibrated table (ids suggested, you confirm)",
    )
    es.add_argument(
        "image",
        type=Path,
        nargs="?",
        help="a JPEG or PNG frame of the whole play area with the cards laid apart (or --camera)",
    )
    es.add_argument(
        "--camera",
        metavar="SOURCE",
        help="take the frame from this camera instead (0 for the first camera, a stream URL)",
    )
    es.add_argument("--enrol", type=Path, help="enrolment folder to write to (else $GIZMOS_ENROL_DIR)")
    es.add_argument("--confirm", type=Path, help='JSON {"<place>": <card id>}: enrol these (no questions)')
    es.add_argument("--suggestions", type=Path, help="write the suggested ids as such a file, to edit")
    es.add_argument("--yes", action="store_true", help="enrol every suggested id as it is")
    s = sub.add_parser("synth", help="render random tables with their ground truth")
    s.add_argument("--out", type=Path, default=Path("data/synth"), help="folder to write the scenes to")
    s.add_argument("--count", type=int, default=4, help="tables to render")
    s.add_argument("--seed", type=int, default=0, help="seed of the first table (then +1 each)")
    s.add_argument("--size", choices=["1280x720", "1920x1080"], default="1280x720", help="frame size")
    s.add_argument("--players", type=int, choices=[2, 3, 4], help="players at the table (else random)")
    s.add_argument("--enrol", type=Path, help="enrolment folder whose photos replace the drawn faces")
    d = sub.add_parser("dataset", help="render the YOLO training set (resumable)")
    d.add_argument("--out", type=Path, default=Path("data/detector"), help="dataset folder")
    d.add_argument("--train", type=int, default=2000, help="training scenes")
    d.add_argument("--val", type=int, default=100, help="validation scenes")
    d.add_argument("--workers", type=int, default=2, help="rendering processes")
    d.add_argument("--tile", type=int, default=384, help="tile size in canonical pixels")
    d.add_argument("--tiles-per-scene", type=int, default=3, help="training tiles cut from each scene")
    d.add_argument("--whole", action="store_true", help="whole canonical frames, not tiles (stage 2)")
    d.add_argument("--hand-prob", type=float, default=0.3, help="share of scenes with a hand")
    _randomise_option(
        d,
        "domain-randomised decks, tables, tokens, marbles, lamps (issue 14); LOOK 1 is the "
        "first round's, 2 adds marble materials, token printings, tray heaps, same-colour "
        "tables, 3 (the default) arms of any skin tone, sleeves and gloves",
    )
    d.add_argument(
        "--raytrace",
        action="store_true",
        help="ray-trace the scenes in 3-D with POV-Ray (vision/training/raytrace.py; no hands)",
    )
    d.add_argument(
        "--heaps",
        action="store_true",
        help="every ring a touching heap of 4-8 marbles, and each scene's first tile on a ring",
    )
    d.add_argument(
        "--seed-offset", type=int, default=0, help="added to the training and validation seed bases"
    )
    mx = sub.add_parser("dataset-mix", help="one dataset YAML over several rendered sets (train on all)")
    mx.add_argument("--out", type=Path, required=True, help="dataset YAML to write")
    mx.add_argument("folders", type=Path, nargs="+", help="dataset folders written by `vision dataset`")
    t = sub.add_parser("train", help="train the detector from scratch (shows progress; --resume continues)")
    t.add_argument("--data", type=Path, default=Path("data/detector/gizmos.yaml"), help="dataset YAML")
    t.add_argument("--epochs", type=int, default=25, help="training epochs")
    t.add_argument("--imgsz", type=int, default=384, help="training image size in px")
    t.add_argument("--batch", type=int, default=16, help="batch size")
    t.add_argument("--threads", type=int, default=2, help="torch threads (see docs/vision.md for the choice)")
    t.add_argument("--name", default="detector", help="run name (the folder under runs/)")
    t.add_argument("--resume", action="store_true", help="continue the interrupted run")
    t.add_argument("--from", dest="start", type=Path, help="start from these weights (a second stage)")
    t.add_argument("--lr0", type=float, default=0.002, help="initial learning rate")
    t.add_argument(
        "--freeze",
        type=int,
        help="freeze the first N layers (10: the backbone) of a fine-tune --from weights",
    )
    t.add_argument("--smoke", action="store_true", help="one epoch on a few tiny rendered tiles (CI)")
    x = sub.add_parser("export", help="copy trained weights to models/ and export ONNX")
    x.add_argument(
        "--weights", type=Path, default=Path("runs/detector/weights/best.pt"), help="trained weights"
    )
    x.add_argument("--out", type=Path, default=Path("models"), help="folder for detector.pt and .onnx")
    hs, th = _small_network(sub, "hands", "hand", "hand network", train=2400, val=200, epochs=30)
    _randomise_option(
        hs, "domain-randomised tables, decks, lamps and arms (see `vision dataset --randomise`)"
    )
    hs.add_argument(
        "--randomise-share",
        type=float,
        default=1.0,
        help="share of scenes randomised with --randomise (drawn per seed; the rest the project's look)",
    )
    hs.add_argument(
        "--arms-share",
        type=float,
        default=0.0,
        help="share of the project's own-look scenes drawn with look 3's arms (any skin tone, "
        "sleeves, gloves) on the project's tables (drawn per seed)",
    )
    th.add_argument("--batch", type=int, default=16, help="batch size")
    _small_network(sub, "tokens", "token", "VP-token reader", train=1600, val=200, epochs=12)
    fm = sub.add_parser("fit-marbles", help="fit the marble colour stage on rendered tables")
    fm.add_argument("--tables", type=int, default=300, help="rendered tables to fit on")
    fm.add_argument(
        "--out", type=Path, default=None, help="parameter file (default: vision/data/marble_colours.json)"
    )
    c = sub.add_parser(
        "calibrate",
        help="find the markers and write an annotated image; --live: the framing assistant on a camera",
        description="Calibrate from one frame, or (--live SOURCE) watch a camera being set up: each "
        "verdict says which markers are found and at what size, the table's px/mm against what "
        "recognition needs, the tilt, sharpness and light, and what to move; once the framing is good "
        "in a row of frames the calibration is saved (--save, default calibration.json with --live) "
        "and the command ends (docs/cameras.md).",
    )
    c.add_argument("image", type=Path, nargs="?", help="a camera frame showing the four markers")
    c.add_argument(
        "--live",
        metavar="SOURCE",
        help="a camera index, stream URL, video file or image folder to set up (instead of an image)",
    )
    c.add_argument(
        "--timeout", type=float, default=0.0, help="--live: give up after this many seconds (default: never)"
    )
    c.add_argument("--out", type=Path, help="also write the frame annotated with the markers and zones (PNG)")
    c.add_argument("--zones", type=Path, help="zones YAML file (default: the built-in table)")
    c.add_argument(
        "--save", type=Path, help="also write the homography (JSON; with --live: default calibration.json)"
    )
    c.add_argument(
        "--empty-table",
        action="store_true",
        help="the table is empty now (markers, mats and tray only): save the frame beside the "
        "calibration (NAME-empty.png), and run/serve --calibration tell from it what covers the "
        "table: any arm, sleeve, cup (vision/occlusion.py)",
    )
    m = sub.add_parser("print-markers", help="write the ArUco marker sheet as PNG")
    m.add_argument("--out", type=Path, default=Path("markers.png"), help="PNG to write")
    m.add_argument("--dpi", type=int, default=150, help="print resolution")
    m.add_argument("--marker-mm", type=float, help="black square side to print (default: the zones file's)")
    m.add_argument(
        "--camera-height", type=float, help="cm above the table: say whether the markers are big enough"
    )
    m.add_argument("--width", type=int, default=1280, help="camera frame width in px (with --camera-height)")
    m.add_argument("--fov", type=float, default=70.0, help="camera's horizontal view in degrees")
    m.add_argument("--tilt", type=float, default=0.0, help="camera tilt from straight down, degrees")
    o = sub.add_parser("observe", help="turn frames into table observations (JSON lines)")
    o.add_argument("images", type=Path, nargs="+", help="frames (image files)")
    o.add_argument(
        "--model",
        type=Path,
        default=None,
        help="detector ONNX file (default: $GIZMOS_DETECTOR, else the committed one)",
    )
    o.add_argument("--players", type=int, choices=[2, 3, 4], default=2, help="players at the table")
    o.add_argument("--zones", type=Path, help="zones YAML file (default: the built-in table)")
    o.add_argument(
        "--enrol",
        type=Path,
        help="enrolment folder of card photos (else $GIZMOS_ENROL_DIR, else drawn faces)",
    )
    o.add_argument("--stream", action="store_true", help="apply the still-frame gate (frames in order)")
    w = sub.add_parser("workbench", help="read a Contrivance Workbench from frames (JSON lines)")
    w.add_argument("images", type=Path, nargs="+", help="frames (image files), in order")
    w.add_argument("--rows", type=int, choices=[3, 6], default=6, help="3: mat 1 alone; 6: both mats")
    w.add_argument(
        "--model", type=Path, default=None, help="square network ONNX (default: the committed one)"
    )
    w.add_argument(
        "--tiles",
        type=Path,
        default=None,
        help="the table's enrolled tile photos (Engineer-3.jpg, ...): crops are compared with them too",
    )


def run(args: argparse.Namespace) -> int:
    """Run a parsed ``vision`` command; bad input is one line on stderr and exit status 2."""
    try:
        return _run(args)
    except VisionError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _enrol_spread(a: argparse.Namespace) -> int:
    from referee.app.spread import enrol_spread_command
    from web.live import QuestionRefused

    enrol = a.enrol or Settings.from_env().enrol_dir
    interactive = not (a.confirm or a.yes or a.suggestions) and sys.stdin.isatty()
    try:
        return enrol_spread_command(
            a.image,
            enrol,
            a.confirm,
            a.suggestions,
            a.yes,
            ask=input if interactive else None,
            camera=a.camera,
        )
    except QuestionRefused as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gizmos-referee vision", description=__doc__)
    add_commands(p.add_subparsers(dest="cmd", required=True, metavar="COMMAND"))
    return p


def _run(a: argparse.Namespace) -> int:
    if a.cmd == "faces":
        from vision.faces import write_faces

        paths = write_faces(a.out, a.enrol)
        print(f"faces: wrote {len(paths)} faces to {a.out}")
    elif a.cmd == "enrol-check":
        from vision.enrol import check

        print(check(a.folder).summary())
    elif a.cmd == "enrol-spread":
        return _enrol_spread(a)
    elif a.cmd == "synth":
        _synth(a)
    elif a.cmd == "dataset":
        from vision.training.dataset import DatasetSpec, generate

        spec = DatasetSpec(
            a.out,
            a.train,
            a.val,
            tile=a.tile,
            tiles_per_scene=a.tiles_per_scene,
            hand_prob=a.hand_prob,
            whole=a.whole,
            randomise=a.randomise,
            raytrace=a.raytrace,
            heaps=a.heaps,
        )
        print(f"dataset: ready: {generate(spec, workers=a.workers, seed_offset=a.seed_offset)}")
    elif a.cmd == "dataset-mix":
        from vision.training.dataset import write_mix_yaml

        print(f"dataset-mix: ready: {write_mix_yaml(a.out, a.folders)}")
    elif a.cmd == "train":
        from vision.training.train import TrainConfig, smoke, train

        if a.freeze is not None and (a.start is None or not 1 <= a.freeze <= FREEZE_MAX):
            why = f"give 1-{FREEZE_MAX} layers, and --from the weights to fine-tune"
            raise DatasetError(f"train: --freeze {a.freeze}: {why}")

        best = (
            smoke(threads=a.threads)
            if a.smoke
            else train(
                TrainConfig(
                    a.data,
                    a.epochs,
                    a.imgsz,
                    a.batch,
                    a.threads,
                    name=a.name,
                    start=a.start,
                    lr0=a.lr0,
                    freeze=a.freeze,
                ),
                resume=a.resume,
            )
        )
        print(f"train: weights at {best}")
    elif a.cmd == "export":
        from vision.training.train import export

        pt, onnx_path = export(a.weights, a.out)
        print(f"export: {pt} and {onnx_path}")
    elif a.cmd == "hand-set":
        from vision.training.hands import HandSetSpec, render_hand_set

        for option, share in (("--randomise-share", a.randomise_share), ("--arms-share", a.arms_share)):
            if not 0.0 <= share <= 1.0:
                raise DatasetError(f"{option} must lie in 0..1, not {share}")
        hand_spec = HandSetSpec(
            a.out,
            a.train,
            a.val,
            randomise=a.randomise,
            randomise_share=a.randomise_share,
            arms_share=a.arms_share,
        )
        print(f"hand-set: ready: {render_hand_set(hand_spec, workers=a.workers)}")
    elif a.cmd == "train-hands":
        from vision.training.hands import HandTrainConfig, smoke_hands, train_hands

        if a.smoke:
            print(f"train-hands: smoke export at {smoke_hands(a.smoke, a.threads)}")
        else:
            cfg = HandTrainConfig(a.data, a.out, a.epochs, a.batch, threads=a.threads)
            print(f"train-hands: best weights at {train_hands(cfg, resume=a.resume)}")
    elif a.cmd == "export-hands":
        from vision.paths import LOCATIONS
        from vision.training.hands import export_hands

        print(f"export-hands: wrote {export_hands(a.weights, a.out or LOCATIONS.hands)}")
    elif a.cmd == "token-set":
        from vision.training.tokens import TokenSetSpec, render_token_set

        print(f"token-set: ready: {render_token_set(TokenSetSpec(a.out, a.train, a.val), workers=a.workers)}")
    elif a.cmd == "train-tokens":
        from vision.training.tokens import TokenTrainConfig, smoke_tokens, train_tokens

        if a.smoke:
            print(f"train-tokens: smoke export at {smoke_tokens(a.smoke, a.threads)}")
        else:
            token_cfg = TokenTrainConfig(a.data, a.out, a.epochs, threads=a.threads)
            print(f"train-tokens: best weights at {train_tokens(token_cfg, resume=a.resume)}")
    elif a.cmd == "export-tokens":
        from vision.paths import LOCATIONS
        from vision.training.tokens import export_tokens

        print(f"export-tokens: wrote {export_tokens(a.weights, a.out or LOCATIONS.tokens)}")
    elif a.cmd == "fit-marbles":
        from vision.marbles import DEFAULT_PARAMS
        from vision.training.marbles import fit_from_renders

        print(f"fit-marbles: wrote {fit_from_renders(a.tables, a.out or DEFAULT_PARAMS)}")
    elif a.cmd == "calibrate":
        _calibrate(a)
    elif a.cmd == "print-markers":
        from dataclasses import replace

        from vision.calibrate import marker_advice, write_marker_sheet
        from vision.errors import CalibrationError
        from vision.zones import default_zones

        zones = default_zones()
        if a.marker_mm is not None:
            if not 20 <= a.marker_mm <= 150:
                raise CalibrationError(f"print-markers: --marker-mm {a.marker_mm:g} is not 20-150 mm")
            zones = replace(zones, marker_mm=a.marker_mm)
        if a.camera_height is not None:
            advice = marker_advice(a.camera_height * 10, a.width, a.fov, a.tilt, zones)
            print("print-markers: " + advice.summary())
        print(f"print-markers: wrote {write_marker_sheet(a.out, zones, dpi=a.dpi)}")
    elif a.cmd == "observe":
        _observe(a)
    elif a.cmd == "workbench":
        _workbench(a)
    return 0


def _workbench(a: argparse.Namespace) -> None:
    import dataclasses
    import json

    from vision.frames import read_frame
    from vision.workbench import WorkbenchObserver

    observer = WorkbenchObserver(a.model, a.rows, a.tiles)
    for i, path in enumerate(a.images):
        obs = observer.observe(read_frame(path), frame_no=i)
        print(json.dumps(dataclasses.asdict(obs)))


def _synth(a: argparse.Namespace) -> None:
    import cv2
    import numpy as np

    from vision.faces import face_set
    from vision.geometry import yolo_text
    from vision.training.synth import RenderSettings, random_layout, render_table

    a.out.mkdir(parents=True, exist_ok=True)
    w, h = (int(v) for v in a.size.split("x"))
    faces = face_set(a.enrol)
    for i in range(a.count):
        seed = a.seed + i
        scene = render_table(
            random_layout(np.random.default_rng(seed), a.players),
            seed,
            RenderSettings(size=(w, h)),
            faces=faces,
        )
        cv2.imwrite(str(a.out / f"scene_{seed}.jpg"), scene.image)
        (a.out / f"scene_{seed}.json").write_text(json.dumps(scene.truth.to_json(), indent=1))
        (a.out / f"scene_{seed}.txt").write_text(yolo_text(scene.yolo_labels()))
    print(f"synth: wrote {a.count} scenes (image, observation JSON, canonical-frame YOLO labels) to {a.out}")


def _calibrate(a: argparse.Namespace) -> None:
    from vision.calibrate import Calibrator
    from vision.errors import CalibrationError
    from vision.frames import read_frame
    from vision.zones import load_zones

    if (a.image is None) == (a.live is None):
        raise CalibrationError(
            "calibrate: give one frame (an image file) or --live SOURCE, not both or neither"
        )
    if a.empty_table and a.save is None and a.live is None:
        raise CalibrationError("calibrate: --empty-table is saved beside the calibration: give --save FILE")
    zones = load_zones(a.zones)
    if a.live is not None:
        _calibrate_live(a, zones)
        return
    frame = read_frame(a.image)
    cal = Calibrator(zones).update(frame)
    wrote = _write_calibration(a.out, a.save, frame, cal, zones, {}, a.empty_table)
    print(
        f"calibrate: markers {list(cal.markers_seen)}, reprojection error {cal.error_px:.2f} px"
        + (f"; wrote {', '.join(wrote)}" if wrote else "")
    )


def _write_calibration(
    out: Path | None,
    save: Path | None,
    frame: Any,
    cal: Any,
    zones: Any,
    extra: dict[str, Any],
    empty_table: bool = False,
) -> list[str]:
    """Check the calibration and write the annotated frame (``out``) and the homography (``save``,
    JSON with ``extra``; with ``empty_table`` the frame itself beside it, which the JSON names);
    the paths written."""
    import cv2

    from vision.calibrate import MAX_REPROJ_PX, annotate, calibration_document, empty_table_path
    from vision.errors import CalibrationError

    if cal.error_px > MAX_REPROJ_PX:
        raise CalibrationError(
            f"calibration: markers {list(cal.markers_seen)} found, but the reprojection error is "
            f"{cal.error_px:.0f} px (above {MAX_REPROJ_PX:.0f} px): they are not laid out as on the "
            "table (is this the printed marker sheet, or the wrong --zones file?); nothing written"
        )
    wrote = []
    document = {**calibration_document(cal, zones, (frame.shape[1], frame.shape[0])), **extra}
    empty = empty_table_path(save) if empty_table and save is not None else None
    if empty is not None:
        document["empty_table"] = empty.name
    for path, write in (
        (out, lambda p: cv2.imwrite(str(p), annotate(frame, cal, zones))),
        (empty, lambda p: cv2.imwrite(str(p), frame)),  # before the JSON that names it
        (save, lambda p: p.write_text(json.dumps(document, indent=1))),
    ):
        if path is None:
            continue
        try:
            if write(path) is False:
                raise OSError(f"cannot write {path}")
        except (OSError, cv2.error) as exc:
            why = getattr(exc, "strerror", None) or getattr(exc, "err", None) or exc
            raise CalibrationError(f"calibration: cannot write {path}: {why}") from exc
        wrote.append(str(path))
    return wrote


#: ``calibrate --live``: verdicts in a row that must be good before the calibration is saved (a
#: camera still being moved passes one frame by chance, not three), and how often a verdict that
#: did not change is printed again.
GOOD_IN_A_ROW = 3
REPEAT_S = 5.0


def _calibrate_live(a: argparse.Namespace, zones: Any) -> None:
    """The framing assistant on a live source until the framing is good, then the calibration."""
    import time

    from referee.app.errors import LiveError
    from referee.app.sources import open_source
    from vision.calibrate import Calibrator
    from vision.errors import CalibrationError
    from vision.framing import assess

    if a.timeout < 0:
        raise CalibrationError(f"calibrate: --timeout: expected seconds >= 0, got {a.timeout:g}")
    try:
        source = open_source(a.live)
    except LiveError as exc:
        raise CalibrationError(f"calibrate --live: {exc}") from None
    print(f"calibrate: watching {source.name}; move the camera until the framing is good (Ctrl-C stops)")
    start = time.monotonic()
    shown: tuple[str, ...] | None = None
    shown_at = 0.0
    good = 0
    last = None
    try:
        for frame in source.frames():
            framing = assess(frame.image, zones)
            last = framing
            if framing.advice != shown or time.monotonic() - shown_at >= REPEAT_S:
                print(f"calibrate: {framing.line()}", flush=True)
                shown, shown_at = framing.advice, time.monotonic()
            good = good + 1 if framing.good else 0
            if good >= GOOD_IN_A_ROW:
                cal = Calibrator(zones).update(frame.image)
                save = a.save or Path("calibration.json")
                extra = {"source": source.name, "framing": framing.to_json()}
                wrote = _write_calibration(a.out, save, frame.image, cal, zones, extra, a.empty_table)
                print(
                    f"calibrate: the framing is good; markers {list(cal.markers_seen)}, reprojection "
                    f"error {cal.error_px:.2f} px, {framing.px_per_mm:.2f} px/mm; wrote {', '.join(wrote)}"
                    f" (start the game from it: run --calibration {save})"
                )
                return
            if a.timeout and time.monotonic() - start > a.timeout:
                break
    except LiveError as exc:
        raise CalibrationError(f"calibrate --live: {exc}") from None
    except KeyboardInterrupt:
        pass
    finally:
        source.close()
    advice = "; ".join(last.advice) if last is not None and last.advice else "no frame came"
    raise CalibrationError(f"calibrate --live: the framing never became good ({advice}); nothing written")


def _observe(a: argparse.Namespace) -> None:
    from vision.frames import read_frame
    from vision.observe import Observer
    from vision.zones import load_zones

    seats = (0, 1) if a.players == 2 else tuple(range(a.players))
    obs = Observer(a.model, seats, load_zones(a.zones), str(a.enrol) if a.enrol else None)
    for i, path in enumerate(a.images):
        frame = read_frame(path)
        sight = obs.process(frame) if a.stream else obs.sight(frame, frame_no=i)
        if sight is not None:
            print(sight.observation.dumps())


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    return run(Settings.from_env().fill(_parser().parse_args(sys.argv[1:] if argv is None else argv)))


if __name__ == "__main__":
    raise SystemExit(main())
