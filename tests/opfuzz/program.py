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
    # dynamic=True programs are called a second time with dim 0 of the inputs whose dim 0
    # is ``resize[0]`` made ``resize[1]`` (the other sizes stay: weights must still fit).
    resize: tuple | None = None
    # Float inputs require grad; each call is followed by ``sum of the float outputs
    # .backward()`` and the inputs' grads are compared too.
    backward: bool = False

    def call_inputs(self, call: int) -> list[InputSpec]:
        specs = [self.inputs[p] for p in self.used_inputs()]
        if call == 0:
            return specs
        old, new = self.resize
        return [s.with_shape((new,) + s.shape[1:]) if s.shape and s.shape[0] == old else s for s in specs]

    @property
    def calls(self) -> int:
        return 1 if self.resize is None else 2

    def used_inputs(self) -> list[str]:
        text = "\n".join(line.text for line in self.lines) + " " + " ".join(self.outputs)
        return [name for name in self.inputs if _mentions(text, name)]

    def source(self) -> str:
        params = self.used_inputs()
        body = [f"    {text}" for line in self.lines for text in line.text.split("\n")]
        body.append(f"    return ({', '.join(self.outputs)},)")
        make = [f"    {'if' if k == 0 else 'elif'} call == {k}:\n        return [{', '.join(s.source() for s in self.call_inputs(k))}]"
                for k in range(self.calls)]
        compile_with = "" if self.resize is None else "\n# compiled with dynamic=True"
        compile_with += "\n# then: sum of the float results .backward()" if self.backward else ""
        return (f"{HEADER}\n\n# opfuzz seed {self.seed}{compile_with}\ndef f({', '.join(params)}):\n" + "\n".join(body)
                + "\n\n\ndef make_inputs(call=0):\n" + "\n".join(make) + "\n")

    def ops(self) -> list[str]:
        return [line.op for line in self.lines]


def _mentions(text: str, name: str) -> bool:
    import re

    return re.search(rf"\b{name}\b", text) is not None
