"""The GPT training scenario shared by fixtures/record_gpt_training.py (torch) and test_gpt_training.py.

A character data set generated with NumPy (seed 0), windows of it served by a DataLoader
(shuffled with a seeded dl.Generator), the zoo's nanoGPT-shaped model built under
``dl.manual_seed(0)``, AdamW with decay / no-decay parameter groups and clip_grad_norm_.
"""
from __future__ import annotations

import numpy as np

import dynamo_lite as dl
from benchmarks.models import GPT
from dynamo_lite.utils import data

STEPS = 50
BATCH, BLOCK, EMBD, HEADS, LAYERS = 8, 16, 32, 4, 2
ALPHABET = "abcdefgh .,\n"
LR, WEIGHT_DECAY, BETAS, CLIP = 3e-3, 0.1, (0.9, 0.95), 1.0
LOADER_SEED, MODEL_SEED = 1234, 0


def make_text(length: int = 2000) -> np.ndarray:
    """Token ids of a text of random 'words' over ALPHABET: learnable short-range structure."""
    rng = np.random.default_rng(0)
    words = ["".join(rng.choice(list("abcdefgh"), size=rng.integers(2, 6))) for _ in range(30)]
    text = ""
    while len(text) < length:
        text += " ".join(rng.choice(words, size=8)) + rng.choice([".", ",", ".\n"]) + " "
    return np.array([ALPHABET.index(c) for c in text[:length]], dtype=np.int64)


class CharWindows(data.Dataset):
    """Sample i: (tokens i..i+BLOCK-1, tokens i+1..i+BLOCK) of the text."""

    def __init__(self, tokens: np.ndarray):
        self.tokens = dl.tensor(tokens)

    def __len__(self) -> int:
        return self.tokens.shape[0] - BLOCK

    def __getitem__(self, index):
        return self.tokens[index:index + BLOCK], self.tokens[index + 1:index + BLOCK + 1]


def make_loader(num_workers: int):
    return data.DataLoader(CharWindows(make_text()), batch_size=BATCH, shuffle=True, drop_last=True,
                           num_workers=num_workers, generator=dl.Generator().manual_seed(LOADER_SEED),
                           multiprocessing_context=None)


def batches(loader, steps: int = STEPS):
    """The first ``steps`` batches, epoch after epoch."""
    out = []
    while len(out) < steps:
        for batch in loader:
            out.append(batch)
            if len(out) == steps:
                break
    return out


def make_model():
    dl.manual_seed(MODEL_SEED)
    return GPT(len(ALPHABET), BLOCK, EMBD, HEADS, LAYERS)


def group_names(named_parameters) -> tuple:
    """(decayed, not decayed) parameter names: matrices decay, biases and LayerNorm weights do not."""
    decay, no_decay = [], []
    for name, param in named_parameters:
        (decay if param.dim() >= 2 else no_decay).append(name)
    return decay, no_decay
