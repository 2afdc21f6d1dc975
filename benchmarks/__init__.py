"""Reproducible benchmarks: the model zoo, NumPy baselines and timing scripts."""
import os

# A process that imports torch beside dynamo_lite runs two OpenMP runtimes. torch's reads
# OMP_WAIT_POLICY once, when it is imported: unless it is PASSIVE there too, each runtime's
# idle threads spin on the cores the other's team waits for (a native softmax took 8 ms
# instead of 0.5; the CNN training step 2.3x its time without torch). Every benchmark
# module is imported after this line, so this is the one place that sets it.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
