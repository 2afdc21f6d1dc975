# fuzz-case: seed=2230 backend=eager kind=exception (list.index comparing tensors raises inside `with dl.no_grad()` inside a try: eager catches the RuntimeError, the compiled frame let it escape and left grad mode off: the with block's cleanup handler hid the try around it)
import numpy as np
import dynamo_lite as dl

class Box:
    def __init__(self, t):
        pass

def f(x, y, n, xs, d, obj):
    y = x * 2
    try:
        with dl.no_grad():
            n = xs.index(xs[-1]) if xs else -1
    except (KeyError, IndexError, ValueError, RuntimeError) as e:
        pass
    return y

def make_inputs(k):
    rng = np.random.RandomState(k)

    def t():
        return dl.tensor(rng.randint(-3, 4, size=(3, 4)).astype("float32"))

    d = {"a": t(), "b": t()}
    if k == 1:
        d["c"] = t()
    return t(), t(), 1 + k % 2, [t() for _ in range(2 + k % 2)], d, Box(t())
