"""Loading an exported network onto OpenCV's DNN module, with one clear error when it cannot be."""

from __future__ import annotations

from pathlib import Path

import cv2

from vision.errors import ModelFileError


def load_onnx(path: Path, what: str) -> cv2.dnn.Net:
    """The ONNX network at ``path``; a missing or unreadable file is a :class:`ModelFileError`
    naming ``what`` ("hand model", "workbench model") and the file."""
    if not path.is_file():
        raise ModelFileError(f"{what} file {path} not found")
    try:
        return cv2.dnn.readNetFromONNX(str(path))
    except cv2.error as exc:
        raise ModelFileError(f"{what}: cannot load {path}: {exc.msg.strip()}") from None
