"""Torch-free detector inference on the rectified table (OpenVINO, onnxruntime or OpenCV DNN).

The ONNX export (``vision export``) takes an image of any size, the 960 × 608 canonical table
image or a crop of it; its output is ultralytics' raw head (1, 4 + classes, anchors). A
:class:`Detector` is loaded for one input size (the whole frame by default). Decoding and
non-maximum suppression are done here in numpy so that inference needs neither torch nor
ultralytics.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.errors import FrameError, ModelFileError
from vision.frames import native_stderr
from vision.geometry import CANON_PX_PER_MM, CANON_SIZE, CLASSES
from vision.networks import first_reason, openvino_compiled
from vision.paths import LOCATIONS

#: Runtimes for the ONNX export, the shipped one first: OpenVINO measured fastest on this CPU
#: (benchmarks/vision.py: 31 ms against onnxruntime 38 ms and OpenCV DNN 64 ms, 2 threads,
#: idle; 54 against 60 ms with the other core busy). onnxruntime and OpenCV stay selectable.
BACKENDS = ("openvino", "onnxruntime", "opencv")
DEFAULT_BACKEND = BACKENDS[0]


#: The detector's input: the whole canonical frame (height, width).
CANON_HW = (CANON_SIZE[1], CANON_SIZE[0])
#: ultralytics' detection head predicts on grids of these strides (anchors = cells of all three).
STRIDES = (8, 16, 32)


def anchors(input_hw: tuple[int, int]) -> int:
    """How many boxes the raw head predicts for an input (height, width): one per grid cell."""
    return sum((input_hw[0] // s) * (input_hw[1] // s) for s in STRIDES)


def default_model() -> Path:
    """The committed detector (of the default locations: vision/paths.py). Another (say, a model
    in training) is passed in: ``Detector(path)``, ``--model``, or ``$GIZMOS_DETECTOR``, which only
    the application reads (referee/app/settings.py)."""
    return LOCATIONS.detector


@dataclass(frozen=True, slots=True)
class Detection:
    """One detected object in canonical-image pixels (x1, y1, x2, y2)."""

    cls: str
    confidence: float
    box: tuple[float, float, float, float]

    @property
    def center(self) -> tuple[float, float]:
        return ((self.box[0] + self.box[2]) / 2, (self.box[1] + self.box[3]) / 2)

    @property
    def box_mm(self) -> tuple[float, float, float, float]:
        """The box in table millimetres (the canonical frame is the table at a fixed scale)."""
        x1, y1, x2, y2 = (v / CANON_PX_PER_MM for v in self.box)
        return x1, y1, x2, y2

    @property
    def center_mm(self) -> tuple[float, float]:
        """The box's centre in table millimetres."""
        cx, cy = self.center
        return cx / CANON_PX_PER_MM, cy / CANON_PX_PER_MM


def nms(boxes: np.ndarray, scores: np.ndarray, iou: float) -> list[int]:
    """Greedy non-maximum suppression; returns kept indices by descending score."""
    order = np.argsort(-scores)
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    keep: list[int] = []
    while order.size:
        i = int(order[0])
        keep.append(i)
        rest = order[1:]
        xx1 = np.maximum(boxes[i, 0], boxes[rest, 0])
        yy1 = np.maximum(boxes[i, 1], boxes[rest, 1])
        xx2 = np.minimum(boxes[i, 2], boxes[rest, 2])
        yy2 = np.minimum(boxes[i, 3], boxes[rest, 3])
        inter = np.clip(xx2 - xx1, 0, None) * np.clip(yy2 - yy1, 0, None)
        order = rest[inter / (area[i] + area[rest] - inter + 1e-9) <= iou]
    return keep


def decode(raw: np.ndarray, conf: float = 0.3, iou: float = 0.5) -> list[Detection]:
    """Turn the raw head output into detections (NMS shared by all object classes, hands apart)."""
    pred = raw.reshape(raw.shape[-2], raw.shape[-1]).T if raw.ndim == 3 else raw.T
    if pred.shape[1] != 4 + len(CLASSES):
        raise ModelFileError(f"detector: model predicts {pred.shape[1] - 4} classes, expected {len(CLASSES)}")
    scores = pred[:, 4:]
    cls = scores.argmax(1)
    best = scores[np.arange(len(cls)), cls]
    m = best >= conf
    pred, cls, best = pred[m], cls[m], best[m]
    if not len(pred):
        return []
    xy, wh = pred[:, :2], pred[:, 2:4]
    boxes = np.concatenate([xy - wh / 2, xy + wh / 2], 1)
    hand = CLASSES.index("hand")
    offset = (cls == hand)[:, None] * 10_000.0  # hands never suppress objects, nor the reverse
    keep = nms(boxes + offset, best, iou)
    return [
        Detection(CLASSES[int(cls[i])], float(best[i]), tuple(float(v) for v in boxes[i]))  # type: ignore[arg-type]
        for i in keep
    ]


class Detector:
    """Loads the exported model once, for one input size; ``detect`` takes a canonical table
    image (BGR), or with ``input_hw`` another size (the heap stage's ring crops) where the file
    takes any size (``vision export`` writes it so)."""

    def __init__(
        self,
        path: str | Path | None = None,
        backend: str = DEFAULT_BACKEND,
        threads: int = 2,
        input_hw: tuple[int, int] = CANON_HW,
    ) -> None:
        p = Path(path) if path is not None else default_model()
        if not p.is_file():
            raise ModelFileError(
                f"detector: model file {p} not found (train and export it, see docs/vision.md)"
            )
        if backend not in BACKENDS:
            raise ModelFileError(f"detector: unknown backend {backend!r}; use one of {BACKENDS}")
        self.backend = backend
        # A model reader that fails prints its own parse errors on fd 2 (the TensorFlow
        # front end of OpenVINO tries the file too): kept off the terminal, the reason is one line.
        with native_stderr():
            try:
                if backend == "onnxruntime":
                    import onnxruntime as ort

                    so = ort.SessionOptions()
                    so.intra_op_num_threads = threads
                    so.inter_op_num_threads = 1
                    # Idle worker threads sleep instead of spinning: spinning threads steal the
                    # cores the rest of the pipeline (and anything else on 2 cores) needs next;
                    # measured under load: detector 158 -> 86 ms, assembly 85 -> 39 ms per frame.
                    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
                    self.session = ort.InferenceSession(str(p), so, providers=["CPUExecutionProvider"])
                    self.input_name = self.session.get_inputs()[0].name
                    shape = self.session.get_inputs()[0].shape  # a size-free export names its axes
                    h, w = (d if isinstance(d, int) else n for d, n in zip(shape[2:], input_hw, strict=True))
                    self.input_hw = (h, w)
                elif backend == "openvino":
                    # a size-free export is fixed to this input size here
                    compiled = openvino_compiled(p, threads, (1, 3, *input_hw))
                    self.request = compiled.create_infer_request()
                    self.output = compiled.output(0)
                    shape = compiled.input(0).shape
                    self.input_hw = (int(shape[2]), int(shape[3]))
                else:
                    cv2.setNumThreads(threads)
                    self.net = cv2.dnn.readNetFromONNX(str(p))
                    self.input_hw = input_hw
            except Exception as exc:  # onnxruntime, OpenVINO and OpenCV raise their own exception types
                raise ModelFileError(f"detector: cannot load model file {p}: {first_reason(exc)}") from exc
        if self.input_hw != input_hw:
            raise ModelFileError(
                f"detector: model file {p} takes {self.input_hw[0]}x{self.input_hw[1]}, expected "
                f"{input_hw[0]}x{input_hw[1]}; re-export it (vision export)"
            )
        if backend == "opencv":
            # OpenCV DNN names no input size: one blank image says whether the file takes this one.
            reason = ""
            with native_stderr():
                try:
                    n = self._raw(np.zeros((1, 3, *input_hw), np.float32)).shape[-1]
                except Exception as exc:  # cv2.error, from the first layer that cannot take it
                    reason = first_reason(exc)
                else:
                    if n != anchors(input_hw):
                        reason = f"its head gives {n} boxes, not {anchors(input_hw)}"
            if reason:
                raise ModelFileError(
                    f"detector: model file {p} takes no {input_hw[0]}x{input_hw[1]} image ({reason}); "
                    "re-export it (vision export)"
                )

    def detect(self, canon: np.ndarray, conf: float = 0.3, iou: float = 0.5) -> list[Detection]:
        """Detections on a canonical image (960 × 608 BGR, or a crop of the loaded size), in its pixels."""
        if not isinstance(canon, np.ndarray) or canon.shape[:2] != self.input_hw:
            got = getattr(canon, "shape", type(canon).__name__)
            raise FrameError(f"detector: expected a canonical image of {self.input_hw}, got {got}")
        blob = np.ascontiguousarray(canon[:, :, ::-1].transpose(2, 0, 1)[None], dtype=np.float32) / 255.0
        return decode(self._raw(blob), conf, iou)

    def _raw(self, blob: np.ndarray) -> np.ndarray:
        """The raw head's output on an input blob (1, 3, height, width)."""
        if self.backend == "onnxruntime":
            raw = self.session.run(None, {self.input_name: blob})[0]
        elif self.backend == "openvino":
            raw = self.request.infer({0: blob})[self.output]
        else:
            self.net.setInput(blob)
            raw = self.net.forward()
        return np.asarray(raw)
