"""How long the HTML compile report of the GPT-style model takes to write, and how large it is.

Run from the repository root: ``OPENBLAS_NUM_THREADS=1 python3 benchmarks/html_report.py``
(medians of interleaved rounds; the explain run itself is timed apart from writing the page).
"""
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import dynamo_lite as dl  # noqa: E402
from benchmarks import models  # noqa: E402

ROUNDS = 5


def main() -> None:
    workload = models.WORKLOADS["gpt"]
    model, inputs = workload.make(), workload.make_inputs()
    times = {backend: {"explain": [], "to_html": []} for backend in ("eager", "numpy")}
    sizes = {}
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(ROUNDS):
            for backend, spent in times.items():
                start = time.perf_counter()
                explained = dl.explain(model, backend=backend)(*inputs)
                middle = time.perf_counter()
                path = explained.to_html(os.path.join(folder, f"{backend}.html"))
                spent["explain"].append(middle - start)
                spent["to_html"].append(time.perf_counter() - middle)
                sizes[backend] = (os.path.getsize(path), explained.graph_count,
                                  sum(len(gm.graph.nodes) for gm in explained.graphs))
    for backend, spent in times.items():
        size, graphs, nodes = sizes[backend]
        print(f"gpt, {backend:5s}: explain {statistics.median(spent['explain']) * 1e3:7.1f} ms, to_html "
              f"{statistics.median(spent['to_html']) * 1e3:6.1f} ms, {size / 1e6:.2f} MB "
              f"({graphs} graph(s), {nodes} nodes)")


if __name__ == "__main__":
    main()
