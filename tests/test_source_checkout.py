"""A plain copy of the repository (no install) imports like an install: dl.backends is bound."""
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

CHECK = """
import sys
import dynamo_lite as dl
backends = sys.modules["dynamo_lite.backends"]
assert dl.backends is backends, "dl.backends is not the registered module"
assert backends.__file__.startswith(sys.argv[1]), backends.__file__
assert "eager" in dl.backends.list_backends()
print("ok")
"""


def test_backends_bound_on_the_package_in_a_plain_copy(tmp_path):
    # Only the two source folders, as a checkout has them: backends/ next to dynamo_lite/,
    # not inside it, so the installed mapping (pyproject package-dir) is not there.
    for folder in ("dynamo_lite", "backends"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    assert not (tmp_path / "dynamo_lite" / "backends").exists()
    result = subprocess.run(
        [sys.executable, "-c", CHECK, str(tmp_path / "backends")],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
