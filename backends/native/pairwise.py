"""NumPy's pairwise summation order as C functions: what makes native sums equal eager's bits."""
from __future__ import annotations

PAIRWISE_LEAF = 128  # NumPy's pairwise-summation block: rows up to this long are one leaf


def pairwise_function(name: str, t: str, parameters: str, arguments: list, step: list, value: str) -> str:
    """A C function summing ``value`` over row indices ``[lo, lo + n)`` in NumPy's pairwise order.

    NOTE: [native sums] Eager sums float32 (and float64) rows with NumPy's pairwise
    summation, in the element type: a row of at most 128 elements is one leaf (below 8
    elements a plain loop; else 8 running sums over the elements i = j mod 8, combined as
    ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)), then the remainder added in order); a longer
    row splits at half its length rounded down to a multiple of 8, both halves summed
    the same way and added. The C kernels repeat exactly this (the 8 running sums are
    one vector register), so sums, means, variances and layer_norm's statistics equal
    eager's bits; NumPy's reductions of a unit-stride row always take this path.
    """
    def term(index: str, update: str) -> list:
        """Lines computing ``value`` at row index ``index`` and applying ``update`` (``{}``: the value)."""
        inner = [f"const int64_t i = {index};", *step, update.format(value)]
        return ["{", *("  " + line for line in inner), "}"]

    def lanes(*updates) -> list:
        """The 8 lanes of running sums, one block per (index, update) pair, as one vector loop."""
        body = [line for index, update in updates for line in term(index, update)]
        return ["#pragma omp simd", "for (int64_t j = 0; j < 8; j++) {", *("  " + line for line in body), "}"]

    def indent(lines: list, depth: int = 1) -> list:
        return ["  " * depth + line for line in lines]

    combine = "((r{0}[0] + r{0}[1]) + (r{0}[2] + r{0}[3])) + ((r{0}[4] + r{0}[5]) + (r{0}[6] + r{0}[7]))"
    call = lambda function, *extra: f"{function}({', '.join(arguments + list(extra))})"  # noqa: E731
    leaf = [f"static inline {t} {name}_leaf({parameters}) {{",
            f"  {t} res = 0;",
            "  int64_t k = 0;",
            "  if (n >= 8) {",
            f"    {t} r1[8];",
            *indent(lanes(("lo + j", "r1[j] = {};")), 2),
            "    for (k = 8; k < n - n % 8; k += 8) {",
            *indent(lanes(("lo + k + j", "r1[j] += {};")), 3),
            "    }",
            f"    res = {combine.format(1)};",
            "  }",
            "  for (; k < n; k++)",
            *indent(term("lo + k", "res += {};")),
            "  return res;",
            "}"]
    # Two sibling leaves at once (8 <= n1 <= n2, n1 a multiple of 8): two independent chains of
    # vector additions, where one leaf alone waits for each addition's latency.
    two_parameters = parameters.replace("int64_t lo, int64_t n", "int64_t lo1, int64_t n1, int64_t lo2, int64_t n2")
    pair = [f"static inline {t} {name}_pair({two_parameters}) {{",
            f"  {t} r1[8], r2[8];",
            *indent(lanes(("lo1 + j", "r1[j] = {};"), ("lo2 + j", "r2[j] = {};"))),
            "  int64_t k = 8;",
            "  for (; k < n1; k += 8) {",
            *indent(lanes(("lo1 + k + j", "r1[j] += {};"), ("lo2 + k + j", "r2[j] += {};")), 2),
            "  }",
            "  for (; k < n2 - n2 % 8; k += 8) {",
            *indent(lanes(("lo2 + k + j", "r2[j] += {};")), 2),
            "  }",
            f"  {t} res = {combine.format(2)};",
            "  for (; k < n2; k++)",
            *indent(term("lo2 + k", "res += {};")),
            f"  return ({combine.format(1)}) + res;",
            "}"]
    tree = [f"static {t} {name}({parameters}) {{",
            f"  if (n <= {PAIRWISE_LEAF}) return {call(name + '_leaf', 'lo', 'n')};",
            "  int64_t half = n / 2;",
            "  half -= half % 8;",
            f"  if (n - half <= {PAIRWISE_LEAF}) return {call(name + '_pair', 'lo', 'half', 'lo + half', 'n - half')};",
            f"  return {call(name, 'lo', 'half')} + {call(name, 'lo + half', 'n - half')};",
            "}"]
    return "\n".join(leaf + [""] + pair + [""] + tree)
