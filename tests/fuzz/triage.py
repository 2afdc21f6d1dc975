"""Name the likely root cause of a minimized failing program (families of issue #17).

A guess from the statements that survived minimization: the first pattern of
``FAMILIES`` found in ``f``'s body (or the prelude) names the family. Unmatched programs
are new root causes to look at by hand.
"""
from __future__ import annotations

import re

from .program import Program

# (pattern over the minimized source, family) — the first match wins, most specific first.
FAMILIES = [
    (r"def __getattr__", "I: the compiler calls a user __getattr__ while classifying an object"),
    (r"acc=\[\]", "K: mutations of a mutable default argument are dropped"),
    (r"\+= \[|\|= \{", "C: an in-place operator on a container does not mutate it"),
    (r"\.(items|keys|values)\(\)$|= \w+\.(items|keys|values)\(\)\n", "N: dict views are list snapshots"),
    (r"Box\.kind|type\(\w+\)\.kind", "G: class attributes are read without a guard"),
    (r"dict\(\w+|\.copy\(\)|\{\*\*", "Q: a dict built from another shares its state"),
    (r"\.v = ", "H: attribute stores bypass properties and __setattr__"),
    (r"def __setattr__", "H: attribute stores bypass properties and __setattr__"),
    (r"next\(gen_", "L: generators run ahead of their consumer"),
    (r"for \w+, \w+ in \w+\.items\(\):(.|\n)*(\.(pop|popitem|update|setdefault)\(|del \w+\[|\w+\[.+\] = )",
     "E/N: a loop over d.items() whose body changes the size of d must raise RuntimeError (items() is a list snapshot)"),
    (r"for \w+, \w+ in enumerate\(\w+\):(.|\n)*(\.(pop|append|insert|clear|remove|extend)\(|del \w+\[)",
     "E: a loop over a list that the code after a graph break in the loop mutates iterates a tuple snapshot"),
    (r"\.pop\(", "A: a value read before a store is re-read from its source"),
]


def body_text(program: Program) -> str:
    """``f``'s body, as source."""
    return program.source().split("\ndef f(", 1)[1].split("\ndef make_inputs", 1)[0]


def guess_family(program: Program) -> str:
    source = program.source().split("\ndef make_inputs", 1)[0]
    for pattern, family in FAMILIES:
        if re.search(pattern, source, re.MULTILINE):
            return family
    return "new: not matched to a known family"


def one_line(program: Program, limit: int = 160) -> str:
    """``f``'s body on one line (statements joined by '; ')."""
    lines = [line.strip() for line in body_text(program).splitlines()[1:] if line.strip()]
    text = "; ".join(lines)
    return text if len(text) <= limit else text[: limit - 3] + "..."
