"""Loading an exported network onto OpenCV's DNN module or OpenVINO, with one clear error when
it cannot be."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.errors import ModelFileError
from vision.frames import native_stderr

#: Where a small network runs: OpenVINO (f32; the detector's runtime) or OpenCV's DNN module.
BACKENDS = ("openvino", "opencv")


def load_onnx(path: Path, what: str) -> cv2.dnn.Net:
    """The ONNX network at ``path``; a missing or unreadable file is a :class:`ModelFileError`
    naming ``what`` ("hand model", "workbench model") and the file."""
    if not path.is_file():
        raise ModelFileError(f"{what} file {path} not found")
    try:
        return cv2.dnn.readNetFromONNX(str(path))
    except cv2.error as exc:
        raise ModelFileError(f"{what}: cannot load {path}: {exc.msg.strip()}") from None


def first_reason(exc: Exception) -> str:
    """A native library's multi-line exception as one line: its most telling line."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    telling = [line for line in lines if not line.startswith("Exception from ")]
    return (telling or lines or [type(exc).__name__])[0]


def network_input_size(path: Path, what: str) -> tuple[int, int]:
    """The (w, h) an ONNX network's image input takes (its last two dimensions, which must be
    fixed); a missing or unreadable file, or a free size, is a :class:`ModelFileError`."""
    import openvino as ov

    if not path.is_file():
        raise ModelFileError(f"{what} file {path} not found")
    with native_stderr():
        try:
            shape = ov.Core().read_model(str(path)).input(0).partial_shape
        except Exception as exc:  # OpenVINO raises its own exception types
            raise ModelFileError(f"{what}: cannot load {path}: {first_reason(exc)}") from None
    if shape.rank.is_dynamic or len(shape) != 4 or shape[2].is_dynamic or shape[3].is_dynamic:
        raise ModelFileError(f"{what} {path}: its input is not an image of a fixed size ({shape})")
    return shape[3].get_length(), shape[2].get_length()


def openvino_compiled(path: Path, threads: int, shape: Sequence[int] | None = None) -> Any:
    """The ONNX network at ``path`` compiled by OpenVINO for the CPU (its input fixed to ``shape``
    when the file leaves it free and one is given). Raises what OpenVINO raises; callers say it
    in one line (:func:`first_reason`).

    f32 inference: on CPUs with bf16 units OpenVINO would otherwise drop to bf16, which moved the
    detector's raw box outputs by up to 5 px (a marble is 13 px)."""
    import openvino as ov

    core = ov.Core()
    net = core.read_model(str(path))
    if shape is not None and net.input(0).partial_shape.is_dynamic:
        net.reshape(list(shape))
    return core.compile_model(
        net,
        "CPU",
        {"INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY", "INFERENCE_PRECISION_HINT": "f32"},
    )


class Network:
    """An exported ONNX network with one input and one output, on OpenVINO (``openvino``, f32,
    ``threads`` threads) or OpenCV's DNN module (``opencv``); a missing or unreadable file is a
    :class:`ModelFileError` naming ``what``. One call at a time runs it (a request is not
    shared between threads: an enrolment from the dashboard may come while the live loop runs)."""

    def __init__(self, path: Path, what: str, backend: str = BACKENDS[0], threads: int = 1) -> None:
        if backend not in BACKENDS:
            raise ValueError(f"{what}: backend must be one of {BACKENDS}, not {backend!r}")
        self.backend, self._lock = backend, threading.Lock()
        if backend == "opencv":
            self.net = load_onnx(path, what)
            return
        if not path.is_file():
            raise ModelFileError(f"{what} file {path} not found")
        with native_stderr():  # a reader that fails prints its parse errors on fd 2
            try:
                compiled = openvino_compiled(path, threads)
            except Exception as exc:  # OpenVINO raises its own exception types
                raise ModelFileError(f"{what}: cannot load {path}: {first_reason(exc)}") from None
        self.request, self.output = compiled.create_infer_request(), compiled.output(0)

    def run(self, blob: np.ndarray) -> np.ndarray:
        """The network's output (float32) for an input blob (NCHW float32)."""
        with self._lock:
            if self.backend == "opencv":
                self.net.setInput(blob)
                return np.asarray(self.net.forward(), np.float32)
            return np.asarray(self.request.infer({0: blob})[self.output], np.float32)
