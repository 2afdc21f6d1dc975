"""DYNAMO_LITE_NATIVE_ISA: native kernels built for the CPU's own instructions, or with AVX-512 switched off."""
from __future__ import annotations

import pytest

from dynamo_lite.backends.native import isa, toolchain
from tests.backends.native_cases import needs_compiler

PROBE = """
int dl_probe_avx512(void) {
#if defined(__AVX512F__)
  return 1;
#else
  return 0;
#endif
}
"""


def _cpu_has_avx512f() -> bool:
    with open("/proc/cpuinfo") as f:
        return any(line.startswith("flags") and " avx512f" in line for line in f)


def test_flags_per_choice(monkeypatch):
    monkeypatch.delenv(isa.ENV, raising=False)
    assert isa.isa_flags() == ("-march=native",)
    monkeypatch.setenv(isa.ENV, "AVX2")
    assert isa.isa_flags() == ("-march=native", "-mno-avx512f")
    monkeypatch.setenv(isa.ENV, "native")
    assert isa.isa_flags() == ("-march=native",)


def test_an_unknown_choice_is_a_value_error(monkeypatch):
    monkeypatch.setenv(isa.ENV, "sse9")
    with pytest.raises(ValueError, match="DYNAMO_LITE_NATIVE_ISA='sse9': expected one of native, avx2"):
        isa.isa_flags()


@needs_compiler
def test_avx2_builds_no_avx512_code_and_caches_apart(monkeypatch, tmp_path):
    monkeypatch.setenv("DYNAMO_LITE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv(isa.ENV, "avx2")
    assert toolchain.build(PROBE).dl_probe_avx512() == 0
    monkeypatch.setenv(isa.ENV, "native")
    assert toolchain.build(PROBE).dl_probe_avx512() == int(_cpu_has_avx512f())
    # One shared object per choice (the flags are part of the cache key), for each math-library variant tried.
    assert len(list((tmp_path / "native").glob("k_*.so"))) == 2
