"""Without the tensorboard package, importing dl.utils.tensorboard says which extra to install (runs either way)."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def test_missing_extra_names_it():
    code = ("import sys; sys.modules['tensorboard'] = None  # as if it were not installed\n"
            "try:\n    import dynamo_lite.utils.tensorboard\nexcept ImportError as e:\n    print(type(e).__name__, e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.stdout.startswith("ImportError ") and "pip install 'dynamo_lite[tensorboard]'" in out.stdout, out.stderr


def test_the_rest_of_the_package_imports_without_it():
    code = ("import sys; sys.modules['tensorboard'] = None\n"
            "import dynamo_lite, dynamo_lite.utils, dynamo_lite.demo_train, dynamo_lite.cli\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.stdout.strip() == "ok", out.stderr


def test_demo_logdir_without_it_stops_with_the_reason(tmp_path):
    code = ("import sys; sys.modules['tensorboard'] = None\n"
            "from dynamo_lite.cli import main\n"
            f"sys.exit(main(['demo', '--train', '--steps', '2', '--tasks', 'small_cnn', '--backend', 'eager', "
            f"'--logdir', {str(tmp_path / 'runs')!r}]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 1 and "--logdir: " in out.stderr and "dynamo_lite[tensorboard]" in out.stderr, out
    assert "small_cnn:" not in out.stdout and not (tmp_path / "runs").exists()  # it stopped before training
