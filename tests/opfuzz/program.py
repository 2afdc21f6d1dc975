"""A generated tensor program: input specs, straight-line statements, outputs; and its source."""
from __future__ import annotations

from dataclasses import dataclass, field

from .inputs import InputSpec

HEADER = """import dynamo_lite as dl
import dynamo_lite.nn.functional as F
from tests.opfuzz.inputs import make_input
"""


@dataclass
class Line:
    """One statement defining ``name``; ``exact`` says whether every backend must match eager bit for bit."""

    text: str
    name: str
    op: str
    exact: bool


@dataclass
class Program:
    seed: int
    inputs: dict[str, InputSpec]
    lines: list[Line]
    outputs: list[str]
    exact: dict[str, bool] = field(default_factory=dict)  # per input and line name

    def used_inputs(self) -> list[str]:
        text = "\n".join(line.text for line in self.lines) + " " + " ".join(self.outputs)
        return [name for name in self.inputs if _mentions(text, name)]

    def source(self) -> str:
        params = self.used_inputs()
        body = [f"    {text}" for line in self.lines for text in line.text.split("\n")]
        body.append(f"    return ({', '.join(self.outputs)},)")
        make = ", ".join(self.inputs[p].source() for p in params)
        return (f"{HEADER}\n\n# opfuzz seed {self.seed}\ndef f({', '.join(params)}):\n" + "\n".join(body)
                + f"\n\n\ndef make_inputs():\n    return [{make}]\n")

    def ops(self) -> list[str]:
        return [line.op for line in self.lines]


def _mentions(text: str, name: str) -> bool:
    import re

    return re.search(rf"\b{name}\b", text) is not None
