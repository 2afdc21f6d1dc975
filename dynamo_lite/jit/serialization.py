"""dl.jit.save / dl.jit.load: there is no TorchScript archive; they say to save the state dict."""
from __future__ import annotations

_MESSAGE = ("dl.jit.{what} is not supported: dynamo_lite compiles Python code and has no TorchScript archive "
            "format. Save the weights with dl.save(module.state_dict(), path) and load them into the same Python "
            "module with module.load_state_dict(dl.load(path)).")


def save(m, f, _extra_files=None):
    """Raise NotImplementedError: save the module's state dict with ``dl.save`` instead."""
    raise NotImplementedError(_MESSAGE.format(what="save"))


def load(f, map_location=None, _extra_files=None):
    """Raise NotImplementedError: load a state dict with ``dl.load`` into the Python module instead."""
    raise NotImplementedError(_MESSAGE.format(what="load"))
