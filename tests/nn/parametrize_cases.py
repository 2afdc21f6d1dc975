"""Weight reparametrization cases, written once against the torch API and run with either library.

Each case is ``case(lib, io)``: ``lib`` is torch (when recording) or dynamo_lite (when
testing); ``io`` is a recorder or a checker with the same methods: ``io.input(key, shape)``
(random when recording, the recorded array when testing), ``io.state(key, module)`` (the
module's state_dict saved, or loaded: random initial vectors of spectral norm agree that
way) and ``io.output(key, tensor)`` (saved, or compared with the recorded one).
"""
import numpy as np


def _tensor(lib, io, key, shape, grad=False):
    t = lib.tensor(io.input(key, shape), dtype=lib.float64)
    return t.requires_grad_() if grad else t


def _backward(lib, io, prefix, output, parameters):
    """Backward of a fixed weighting of ``output``; each parameter's gradient is an output."""
    weights = np.cos(np.arange(output.numel(), dtype=np.float64)).reshape(tuple(output.shape))
    (output * lib.tensor(weights, dtype=lib.float64)).sum().backward()
    for name, parameter in parameters:
        io.output(f"{prefix}/grad/{name}", parameter.grad)


def weight_norm_linear(lib, io):
    layer = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(4, 3).double())
    io.state("weight_norm_linear/state", layer)
    x = _tensor(lib, io, "weight_norm_linear/x", (5, 4))
    io.output("weight_norm_linear/g", layer.parametrizations.weight.original0)
    io.output("weight_norm_linear/weight", layer.weight)
    output = layer(x)
    io.output("weight_norm_linear/out", output)
    _backward(lib, io, "weight_norm_linear", output, layer.named_parameters())
    lib.nn.utils.parametrize.remove_parametrizations(layer, "weight")
    io.output("weight_norm_linear/removed", layer.weight)
    io.output("weight_norm_linear/removed_type", np.array(type(layer).__name__ == "Linear"))


def weight_norm_conv_dims(lib, io):
    for dim in (1, None, 2):
        layer = lib.nn.utils.parametrizations.weight_norm(lib.nn.Conv1d(2, 3, 3).double(), dim=dim)
        io.state(f"weight_norm_conv_{dim}/state", layer)
        io.output(f"weight_norm_conv_{dim}/g", layer.parametrizations.weight.original0)
        x = _tensor(lib, io, f"weight_norm_conv_{dim}/x", (2, 2, 5))
        output = layer(x)
        io.output(f"weight_norm_conv_{dim}/out", output)
        _backward(lib, io, f"weight_norm_conv_{dim}", output, layer.named_parameters())


def spectral_norm_linear(lib, io):
    layer = lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(5, 4).double(), n_power_iterations=2)
    io.state("spectral_norm_linear/state", layer)
    x = _tensor(lib, io, "spectral_norm_linear/x", (3, 5))
    for step in range(2):  # training: each forward refines u and v in place
        output = layer(x)
        io.output(f"spectral_norm_linear/out{step}", output)
        io.output(f"spectral_norm_linear/u{step}", layer.parametrizations.weight[0]._u)
    _backward(lib, io, "spectral_norm_linear", output, layer.named_parameters())
    layer.eval()
    io.output("spectral_norm_linear/eval_out", layer(x))
    io.output("spectral_norm_linear/eval_u", layer.parametrizations.weight[0]._u)


def spectral_norm_conv_transpose(lib, io):
    layer = lib.nn.utils.parametrizations.spectral_norm(lib.nn.ConvTranspose2d(2, 3, 2).double())
    io.state("spectral_norm_convt/state", layer)
    io.output("spectral_norm_convt/v_shape", np.array(layer.parametrizations.weight[0]._v.shape[0]))
    x = _tensor(lib, io, "spectral_norm_convt/x", (1, 2, 3, 3))
    io.output("spectral_norm_convt/out", layer(x))


def old_weight_norm(lib, io):
    layer = lib.nn.utils.weight_norm(lib.nn.Linear(4, 3).double(), dim=None)
    io.state("old_weight_norm/state", layer)
    io.output("old_weight_norm/g", layer.weight_g)
    x = _tensor(lib, io, "old_weight_norm/x", (2, 4))
    output = layer(x)
    io.output("old_weight_norm/out", output)
    _backward(lib, io, "old_weight_norm", output, layer.named_parameters())
    lib.nn.utils.remove_weight_norm(layer)
    io.output("old_weight_norm/removed", layer.weight)


def old_spectral_norm(lib, io):
    layer = lib.nn.utils.spectral_norm(lib.nn.Linear(4, 3).double())
    io.state("old_spectral_norm/state", layer)
    x = _tensor(lib, io, "old_spectral_norm/x", (2, 4))
    for step in range(2):
        output = layer(x)
        io.output(f"old_spectral_norm/out{step}", output)
        io.output(f"old_spectral_norm/u{step}", layer.weight_u)
    _backward(lib, io, "old_spectral_norm", output, layer.named_parameters())
    lib.nn.utils.remove_spectral_norm(layer)
    io.output("old_spectral_norm/removed", layer.weight)


CASES = [weight_norm_linear, weight_norm_conv_dims, spectral_norm_linear, spectral_norm_conv_transpose,
         old_weight_norm, old_spectral_norm]


def _module_class(lib):
    class Halve(lib.nn.Module):
        def forward(self, x):
            return x[:1]
    return Halve


#: (name, call(lib)) raising in torch: the exception type and message are recorded.
ERROR_CASES = [
    ("register_missing_name", lambda lib: lib.nn.utils.parametrize.register_parametrization(
        lib.nn.Linear(2, 2), "nothing", lib.nn.Identity())),
    ("register_changes_shape", lambda lib: lib.nn.utils.parametrize.register_parametrization(
        lib.nn.Linear(2, 2), "weight", _module_class(lib)())),
    ("register_chained_changes_shape", lambda lib: lib.nn.utils.parametrize.register_parametrization(
        lib.nn.utils.parametrize.register_parametrization(lib.nn.Linear(2, 2), "weight", lib.nn.Identity()),
        "weight", _module_class(lib)())),
    ("remove_not_parametrized", lambda lib: lib.nn.utils.parametrize.remove_parametrizations(
        lib.nn.Linear(2, 2), "weight")),
    ("remove_weight_norm_unparametrized_sequence", lambda lib: lib.nn.utils.parametrize.remove_parametrizations(
        lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(2, 2)), "weight", leave_parametrized=False)),
    ("spectral_norm_zero_iterations", lambda lib: lib.nn.utils.parametrizations.spectral_norm(
        lib.nn.Linear(2, 2), n_power_iterations=0)),
    ("spectral_norm_dim_out_of_range", lambda lib: lib.nn.utils.parametrizations.spectral_norm(
        lib.nn.Linear(2, 2), dim=2)),
    ("spectral_norm_missing_name", lambda lib: lib.nn.utils.parametrizations.spectral_norm(
        lib.nn.Linear(2, 2), "nothing")),
    ("old_weight_norm_twice", lambda lib: lib.nn.utils.weight_norm(lib.nn.utils.weight_norm(lib.nn.Linear(2, 2)))),
    ("old_remove_weight_norm_missing", lambda lib: lib.nn.utils.remove_weight_norm(lib.nn.Linear(2, 2))),
    ("old_spectral_norm_twice", lambda lib: lib.nn.utils.spectral_norm(lib.nn.utils.spectral_norm(
        lib.nn.Linear(2, 2)))),
]
