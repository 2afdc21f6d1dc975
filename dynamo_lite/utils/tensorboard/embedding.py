"""Embeddings for TensorBoard's projector: tensors.tsv, metadata.tsv, sprite.png and projector_config.pbtxt."""
from __future__ import annotations

import math
import os
from urllib.parse import quote

import numpy as np
from google.protobuf import text_format
from tensorboard.plugins.projector.projector_config_pb2 import EmbeddingInfo, ProjectorConfig

from .convert import to_numpy
from .images import encode_png, make_grid, to_uint8

CONFIG_FILE = "projector_config.pbtxt"


def _write(path: str, data) -> None:
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(path, mode, **({} if mode == "wb" else {"encoding": "utf-8"})) as f:
        f.write(data)


def _metadata_lines(metadata: list, header) -> list:
    if header is None:
        return [str(x) for x in metadata]
    if len(header) != len(metadata[0]):
        raise AssertionError("len of header must be equal to the number of columns in metadata")
    return ["\t".join(str(x) for x in row) for row in [header, *metadata]]


def _sprite(label_img: np.ndarray) -> tuple:
    """The sprite sheet (a square grid of the images, HWC uint8) and one image's ``[width, height]``."""
    count = label_img.shape[0]
    side = math.ceil(math.sqrt(count))
    if label_img.shape[1] not in (1, 3):
        raise AssertionError("label_img should be N x C x H x W with 1 or 3 channels")
    grid = make_grid(to_uint8(label_img), ncols=side)  # C x rows*H x side*W
    height, width = label_img.shape[2], label_img.shape[3]
    square = np.zeros((grid.shape[0], side * height, side * width), np.uint8)
    square[:, :grid.shape[1], :grid.shape[2]] = grid
    return square.transpose(1, 2, 0), [width, height]


def write_embedding(logdir: str, config: ProjectorConfig, mat, metadata=None, label_img=None, global_step=None,
                    tag: str = "default", metadata_header=None) -> EmbeddingInfo:
    """Write one embedding under ``logdir/<step:05d>/<tag>/``, add it to ``config`` and rewrite the config file.

    Raises:
        AssertionError: ``mat`` is not 2-D, or ``metadata``/``label_img`` do not have one
            entry per row (torch raises the same).
    """
    mat = to_numpy(mat)
    step = 0 if global_step is None else int(global_step)
    if mat.ndim != 2:
        raise AssertionError("mat should be 2D, where mat.size(0) is the number of data points")
    subdir = f"{step:05d}/{quote(tag, safe='')}"
    folder = os.path.join(logdir, subdir)
    os.makedirs(folder, exist_ok=True)
    info = EmbeddingInfo(tensor_name=f"{tag}:{step:05d}", tensor_path=f"{subdir}/tensors.tsv")
    if metadata is not None:
        metadata = list(metadata)
        if mat.shape[0] != len(metadata):
            raise AssertionError("#labels should equal with #data points")
        _write(os.path.join(folder, "metadata.tsv"), "\n".join(_metadata_lines(metadata, metadata_header)) + "\n")
        info.metadata_path = f"{subdir}/metadata.tsv"
    if label_img is not None:
        images = to_numpy(label_img)
        if images.ndim != 4 or mat.shape[0] != images.shape[0]:
            raise AssertionError("#images should equal with #data points")
        sprite, size = _sprite(images)
        _write(os.path.join(folder, "sprite.png"), encode_png(sprite))
        info.sprite.image_path = f"{subdir}/sprite.png"
        info.sprite.single_image_dim.extend(size)
    rows = ("\t".join(repr(float(x)) for x in row) for row in mat.astype(np.float64))
    _write(os.path.join(folder, "tensors.tsv"), "\n".join(rows) + "\n")
    config.embeddings.append(info)
    _write(os.path.join(logdir, CONFIG_FILE), text_format.MessageToString(config))
    return info
