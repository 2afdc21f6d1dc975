"""DataLoader workers after dl.compile, with objects that cannot be pickled, and after the main process is killed.

Each case runs a script in a child process started with ``-c`` (so its ``__main__`` has no
file, as in the probe that found these): the second epoch after ``dl.compile`` loaded native
kernels and OpenMP must still start its workers with fork (a lambda worker_init_fn and a
dataset class from ``__main__`` work); forkserver names what it cannot pickle; a killed main
process leaves no shared-memory files behind.
"""
from __future__ import annotations

import glob
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from dynamo_lite.utils.data import shared_memory
from tests.helpers import native_skip_reason

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HAS_FORK = "fork" in multiprocessing.get_all_start_methods()


def run_script(body: str, timeout: float = 240, **env) -> subprocess.CompletedProcess:
    script = f"import sys\nsys.path.insert(0, {ROOT!r})\n" + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, **env))


SECOND_EPOCH = """
    import dynamo_lite as dl
    from dynamo_lite.backends.registry import AUTO
    from dynamo_lite.backends.tiered import TieredFunction
    from dynamo_lite.utils import data

    class Squares(data.Dataset):  # defined in __main__ (a -c script): it cannot be pickled by reference
        def __len__(self):
            return 4
        def __getitem__(self, i):
            big = dl.full((1 << 18,), float(i))
            return float(kernel(big).sum())  # a native kernel (OpenMP-sized) inside the worker

    AUTO.tier_up_seconds = 0.0
    report = dl.explain(lambda x: (x * 2 + 1).tanh() * x, backend="auto")(dl.randn(1 << 18))
    kernel = dl.compile(lambda x: x * 2 + 1, backend="{kernel_backend}")
    (gm, tiered, name), = report.compiled.values()
    assert isinstance(tiered, TieredFunction) and tiered.wait(120), tiered
    print("upper tier built:", tiered.upper is not None, tiered.build_error)  # built, whichever tier the measurement keeps
    kernel(dl.ones(1 << 18))
    seen = []
    loader = data.DataLoader(Squares(), batch_size=2, num_workers=2, worker_init_fn=lambda i: seen.append(i))
    for epoch in range(2):
        print("epoch", epoch, [b.tolist() for b in loader])
"""


@pytest.mark.skipif(not HAS_FORK, reason="fork is not available on this platform")
@pytest.mark.skipif(native_skip_reason() is not None, reason=f"native: {native_skip_reason()}")
def test_a_second_epoch_after_compile_forks_with_a_lambda_and_a_main_class(tmp_path):
    done = run_script(SECOND_EPOCH.replace("{kernel_backend}", "native"), DYNAMO_LITE_CACHE_DIR=str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "upper tier built: True None" in done.stdout, done.stdout  # native built: libgomp is loaded in the main process
    n = 1 << 18
    expected = [[(2 * i + 1) * n for i in (0, 1)], [(2 * i + 1) * n for i in (2, 3)]]
    for epoch in (0, 1):
        assert f"epoch {epoch} {[[float(v) for v in b] for b in expected]}" in done.stdout, done.stdout


def test_forkserver_names_the_object_it_cannot_pickle():
    if "forkserver" not in multiprocessing.get_all_start_methods():
        pytest.skip("no forkserver on this platform")
    done = run_script("""
        import pickle
        from dynamo_lite.utils import data
        from tests.utils.worker_datasets import Rows

        class Local(data.Dataset):
            def __len__(self):
                return 2
            def __getitem__(self, i):
                return i

        for kwargs in ({"dataset": Rows(4), "worker_init_fn": lambda i: None}, {"dataset": Local()}):
            loader = data.DataLoader(num_workers=1, multiprocessing_context="forkserver", **kwargs)
            try:
                list(loader)
                print("LOADED")
            except pickle.PicklingError as exc:
                print("refused:", exc)
    """)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert len(lines) == 2, done.stdout
    assert lines[0].startswith("refused: DataLoader worker_init_fn=<function <lambda>") and "'forkserver'" in lines[0]
    assert lines[1].startswith("refused: DataLoader dataset=<__main__.Local") and "uses Local from __main__" in lines[1]


@pytest.mark.skipif(not HAS_FORK, reason="fork is not available on this platform")
def test_workers_remove_their_shared_memory_files_when_the_main_process_is_killed():
    script = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {ROOT!r})
        from dynamo_lite.utils import data
        from tests.utils.worker_datasets import Rows
        loader = data.DataLoader(Rows(64), batch_size=4, num_workers=2, prefetch_factor=4)
        iterator = iter(loader)
        next(iterator)
        print(iterator._pool.file_prefix, flush=True)
        time.sleep(600)
    """)
    main = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        prefix = main.stdout.readline().strip()
        assert prefix.startswith(f"dynamo_lite_{main.pid}_"), prefix
        pattern = os.path.join(shared_memory.SHARED_DIR, prefix + "*")
        deadline = time.monotonic() + 30
        while not glob.glob(pattern) and time.monotonic() < deadline:  # batches prefetched, not yet received
            time.sleep(0.05)
        assert glob.glob(pattern)
        main.send_signal(signal.SIGKILL)
        main.wait()
        deadline = time.monotonic() + 30  # workers notice within their parent check interval (1 s)
        while glob.glob(pattern) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not glob.glob(pattern)
    finally:
        if main.poll() is None:
            main.kill()
            main.wait()


@pytest.mark.skipif(not HAS_FORK, reason="fork is not available on this platform")
@pytest.mark.skipif(native_skip_reason() is not None, reason=f"native: {native_skip_reason()}")
def test_a_process_forked_after_parallel_kernels_runs_kernels_without_hanging(tmp_path):
    """GNU OpenMP's pool does not survive fork: a child running a 2-thread region after its parent did hung
    (NOTE: [kernels after fork]); the child now runs kernels on one thread, whatever it asks for."""
    done = run_script("""
        import os, time
        import dynamo_lite as dl
        kernel = dl.compile(lambda x: (x * 2 + 1).tanh(), backend="native")
        x = dl.randn(1 << 20)
        dl.set_num_threads(2)
        expected = kernel(x)  # starts the OpenMP pool with two threads
        pid = os.fork()
        if pid == 0:
            dl.set_num_threads(2)  # refused in a forked child: kernels stay on one thread
            os._exit(0 if bool((kernel(x) == expected).all()) and dl.get_num_threads() == 1 else 1)
        for _ in range(600):
            finished, status = os.waitpid(pid, os.WNOHANG)
            if finished:
                print("child exit", os.waitstatus_to_exitcode(status))
                break
            time.sleep(0.1)
        else:
            os.kill(pid, 9)
            print("child hung")
    """, DYNAMO_LITE_CACHE_DIR=str(tmp_path))
    assert done.returncode == 0 and "child exit 0" in done.stdout, (done.stdout, done.stderr[-2000:])
    assert "stay on one thread in a process forked" in done.stderr
