"""The native build cache against planted, damaged and unusable entries (NOTE: [native build cache]).

Shared objects run code when they load: the cache is used only when its folder and files
are private, every entry is checked against its content hash before dlopen, a damaged
entry is rebuilt, and every build failure leaves the graph on numpy with one logged line.
Cases that crashed the process before (a truncated .so: SIGBUS) run in child processes.
"""
from __future__ import annotations

import logging
import os
import stat
import subprocess
import sys
import textwrap
import time

import pytest

import dynamo_lite as dl
from dynamo_lite.backends.native import NativeBackend, disk_cache, toolchain
from dynamo_lite.backends.native.toolchain import BuildError, build
from tests.backends.native_cases import needs_compiler
from tests.helpers import assert_compiled, assert_equal_values

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OTHER_UID = 54321
SOURCE = "int dl_answer(void) { return 42; }\n"

# A child process compiling one graph with the native backend; prints its values and the
# warnings dynamo_lite logged.
CHILD = textwrap.dedent("""
    import logging, sys
    sys.path.insert(0, {root!r})
    logging.basicConfig(level=logging.WARNING, format="LOG %(message)s")
    import dynamo_lite as dl
    x = dl.arange(4000.0) / 1000
    out = dl.compile(lambda x: (x * 2 + 1).tanh(), backend="native")(x)
    print("max error", float(((x * 2 + 1).tanh() - out).abs().max()))
    print("fallbacks", len(dl.stats().fallbacks))
""")


def run_child(cache: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, DYNAMO_LITE_CACHE_DIR=cache)
    return subprocess.run([sys.executable, "-c", CHILD.format(root=ROOT)], env=env, capture_output=True, text=True,
                          timeout=300)


def entries(directory) -> list:
    return sorted(name for name in os.listdir(directory) if name.endswith(".so"))


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DYNAMO_LITE_CACHE_DIR", str(tmp_path))
    return tmp_path / "native"


def compile_on_native(caplog, fn, *args):
    """Compile ``fn`` with the native backend; (result, the warnings logged, the graph's backend code)."""
    backend = NativeBackend()
    before = dl.stats()
    with caplog.at_level(logging.WARNING, logger="dynamo_lite"):
        result = dl.compile(fn, backend=backend)(*args)
    assert_compiled(before, dl.stats())  # compiled (on numpy), no eager fallback
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert not any("internal compiler error" in w for w in warnings), warnings
    return result, warnings


def chain(x):
    return (x * 2 + 1).tanh()


# -- the folder ---------------------------------------------------------------------------------------
@needs_compiler
def test_the_folder_is_created_private_and_entries_are_named_by_their_hash(cache):
    assert build(SOURCE).dl_answer() == 42
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o700
    (name,) = entries(cache)
    assert name.split("-")[1] == disk_cache._digest_of(cache / name) + ".so"
    assert stat.S_IMODE(os.stat(cache / name).st_mode) == 0o600


@pytest.mark.parametrize("spoil", ["world-writable", "group-writable", "owned by another uid", "a symlink"])
def test_an_unsafe_folder_is_refused_and_the_graph_stays_on_numpy(cache, tmp_path, caplog, spoil):
    if spoil == "a symlink":
        (tmp_path / "elsewhere").mkdir(mode=0o700)
        os.symlink(tmp_path / "elsewhere", cache)
    else:
        cache.mkdir(mode=0o700)
        {"world-writable": lambda: os.chmod(cache, 0o777), "group-writable": lambda: os.chmod(cache, 0o770),
         "owned by another uid": lambda: os.chown(cache, OTHER_UID, OTHER_UID)}[spoil]()
    with pytest.raises(BuildError, match="refused"):
        build(SOURCE)
    x = dl.randn(3000)
    result, warnings = compile_on_native(caplog, chain, x)
    assert_equal_values(result, chain(x))
    assert len([w for w in warnings if "native build failed, using numpy" in w and "refused" in w]) == 1, warnings
    assert not [n for n in os.listdir(cache) if n.endswith(".so")]


# -- planted and damaged entries --------------------------------------------------------------------
PLANT = textwrap.dedent("""
    #include <stdio.h>
    __attribute__((constructor)) static void planted(void) {{ FILE *f = fopen("{marker}", "w"); if (f) fclose(f); }}
    int dl_answer(void) {{ return 666; }}
""")


@needs_compiler
def test_a_planted_object_owned_by_another_uid_is_never_loaded(cache, tmp_path):
    assert build(SOURCE).dl_answer() == 42
    (name,) = entries(cache)
    marker = tmp_path / "constructor-ran"
    planted = tmp_path / "planted.so"
    compiler = toolchain.find_compiler()[0]
    subprocess.run([compiler, "-shared", "-fPIC", "-x", "c", "-", "-o", str(planted)],
                   input=PLANT.format(marker=marker), text=True, check=True)
    # The attacker names it by its own hash (the name is no secret) and owns it.
    key = name.split("-")[0][2:]
    target = cache / f"k_{key}-{disk_cache._digest_of(planted)}.so"
    os.replace(cache / name, tmp_path / "original.so")
    os.replace(planted, target)
    os.chmod(target, 0o600)
    os.chown(target, OTHER_UID, OTHER_UID)
    with pytest.raises(BuildError, match=f"owned by uid {OTHER_UID}.*refused"):
        build(SOURCE)
    os.chown(target, os.geteuid(), os.getegid())
    os.chmod(target, 0o666)  # ours, but writable by others: refused too
    with pytest.raises(BuildError, match="writable by group or others"):
        build(SOURCE)
    assert not marker.exists()


@needs_compiler
@pytest.mark.parametrize("damage", ["truncated", "zeroed", "emptied"])
def test_a_damaged_entry_is_rebuilt_by_the_next_process(tmp_path, damage):
    first = run_child(str(tmp_path))
    assert first.returncode == 0 and "fallbacks 0" in first.stdout, first.stderr[-3000:]
    cache = tmp_path / "native"
    names = entries(cache)
    for name in names:
        path = cache / name
        size = path.stat().st_size
        with open(path, "r+b") as f:
            if damage == "truncated":
                f.truncate(size // 2)
            elif damage == "zeroed":
                f.write(bytes(size))
            else:
                f.truncate(0)
    second = run_child(str(tmp_path))
    assert second.returncode == 0, (second.returncode, second.stderr[-3000:])  # was SIGBUS/SIGSEGV
    assert "fallbacks 0" in second.stdout and float(second.stdout.split()[2]) < 1e-5, second.stdout
    assert second.stderr.count("is damaged") == len(names), second.stderr
    rebuilt = entries(cache)
    assert len(rebuilt) == len(names)
    for name in rebuilt:
        assert name.split("-")[1] == disk_cache._digest_of(cache / name) + ".so"


@needs_compiler
def test_temporary_files_of_dead_builds_are_removed(cache):
    assert build(SOURCE).dl_answer() == 42
    finished = subprocess.Popen([sys.executable, "-c", "pass"])
    finished.wait()
    dead, alive = finished.pid, os.getpid()
    old = time.time() - 120
    planted = {
        f".tmp-{dead}-aa.c": old, f".tmp-{dead}-aa.so": old,  # a dead build: removed
        f".tmp-{dead}-bb.c": time.time(),  # too recent to judge: kept
        f".tmp-{alive}-cc.c": old,  # a live build: kept
        "tmpab12cd.c": time.time() - 7200, "tmpab12cd.so.tmp": time.time() - 7200,  # an older version's: removed
        "unrelated.txt": old,
    }
    for name, mtime in planted.items():
        (cache / name).write_bytes(b"x")
        os.utime(cache / name, (mtime, mtime))
    build("int dl_other(void) { return 7; }\n")
    left = set(os.listdir(cache))
    assert {f".tmp-{dead}-bb.c", f".tmp-{alive}-cc.c", "unrelated.txt"} <= left
    assert not left & {f".tmp-{dead}-aa.c", f".tmp-{dead}-aa.so", "tmpab12cd.c", "tmpab12cd.so.tmp"}


# -- build failures --------------------------------------------------------------------------------
FAKE_CC = textwrap.dedent("""\
    #!/bin/sh
    if [ "$1" = "--version" ]; then echo "fake cc 1.0"; exit 0; fi
    {body}
""")


def fake_compiler(tmp_path, monkeypatch, body: str) -> str:
    path = tmp_path / "fake-cc"
    path.write_text(FAKE_CC.format(body=body))
    path.chmod(0o755)
    monkeypatch.setenv("CC", str(path))
    return str(path)


@pytest.mark.parametrize("failure", ["timeout", "compiler error", "not executable", "cache under a file",
                                     "read-only file system"])
def test_every_build_failure_keeps_the_graph_on_numpy_with_one_line(failure, cache, tmp_path, monkeypatch, caplog):
    if failure == "timeout":
        fake_compiler(tmp_path, monkeypatch, f"echo $$ > {tmp_path}/cc.pid; exec sleep 60")
        monkeypatch.setattr(toolchain, "BUILD_TIMEOUT_SECONDS", 1)
        expected = "did not finish within 1 s"
    elif failure == "compiler error":
        fake_compiler(tmp_path, monkeypatch, 'echo "kernel.c:1: error: no" >&2; exit 1')
        expected = "fake-cc failed: kernel.c:1: error: no"
    elif failure == "not executable":
        cc = fake_compiler(tmp_path, monkeypatch, "exit 0")
        toolchain.find_compiler()  # found (and its version read) while it still runs
        os.chmod(cc, 0o644)
        expected = "Permission denied"
    elif failure == "cache under a file":
        (tmp_path / "file").write_text("")
        monkeypatch.setenv("DYNAMO_LITE_CACHE_DIR", str(tmp_path / "file" / "sub"))
        expected = "cannot be created"
    else:
        monkeypatch.setenv("DYNAMO_LITE_CACHE_DIR", "/sys/dynamo_lite_cache")  # sysfs refuses even root
        expected = "cannot be created"
    if failure in ("cache under a file", "read-only file system") and not toolchain.compiler_available()[0]:
        pytest.skip("no C compiler: the build never reaches the cache")
    x = dl.randn(3000)
    result, warnings = compile_on_native(caplog, chain, x)
    assert_equal_values(result, chain(x))
    lines = [w for w in warnings if "native build failed, using numpy" in w]
    assert len(lines) == 1 and expected in lines[0], warnings
    assert "Traceback" not in caplog.text
    if failure == "timeout":
        with pytest.raises(ProcessLookupError):  # the timed-out compiler was stopped, not left running
            os.kill(int((tmp_path / "cc.pid").read_text()), 0)
        assert not [n for n in os.listdir(cache) if n.startswith(".tmp-")]  # its temporaries removed


def test_a_failing_auto_tier_stays_on_numpy(cache, tmp_path, monkeypatch, caplog):
    from dynamo_lite.backends.registry import AUTO
    from dynamo_lite.backends.tiered import TieredFunction

    fake_compiler(tmp_path, monkeypatch, "sleep 60")
    monkeypatch.setattr(toolchain, "BUILD_TIMEOUT_SECONDS", 1)
    monkeypatch.setattr(AUTO, "tier_up_seconds", 0.0)
    report = dl.explain(chain, backend="auto")(dl.randn(3000))
    (gm, function, name), = report.compiled.values()
    assert isinstance(function, TieredFunction) and function.wait(timeout=60)
    assert function.backend_name == "numpy" and "did not finish within 1 s" in function.build_error
