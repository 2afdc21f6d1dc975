"""The install lists every package of the source tree (a missing one imports in a checkout but not once installed)."""
import pathlib
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent
# Folders installed under another name (pyproject package-dir).
INSTALLED_AS = {"dynamo_lite": "dynamo_lite", "backends": "dynamo_lite.backends", "benchmarks": "dynamo_lite.benchmarks"}


def _packages_on_disk():
    for folder, installed_name in INSTALLED_AS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / folder).parts
            yield ".".join((installed_name, *relative))


def test_every_package_is_in_the_install_list():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    on_disk = set(_packages_on_disk())
    assert on_disk - listed == set(), f"packages missing from pyproject's list: {sorted(on_disk - listed)}"
    assert listed - on_disk == set(), f"pyproject lists packages that do not exist: {sorted(listed - on_disk)}"
