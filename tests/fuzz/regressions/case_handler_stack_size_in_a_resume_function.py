# fuzz-case: seed=1320 backend=eager kind=exception (the except clause of a resume function inside a try ran with a too small value stack: the bytecode library sized it from the normal flow only, so the handler's call read garbage)
import numpy as np
import dynamo_lite as dl

G_count = 0
G_list = []
G_t = dl.ones(3, 4)
G_cfg = {"scale": 2}
class Box:
    kind = "box"
    def __init__(self, t):
        self.t = t
        self.count = 0
        self._v = 1
    def scale(self, u):
        return u * self._v + self.t
    def bump(self):
        self.count += 1
        return self.count
    @property
    def v(self):
        return self._v
    @v.setter
    def v(self, value):
        self._v = max(0, min(value, 3))
def maybe_raise(v, k):
    G_list.append(k)
    if k > 1:
        raise ValueError(f"k too big: {k}")
    return v * k

def f(x, y, n, xs, d, obj):
    global G_count, G_t
    t0 = x * x
    if n > 2: raise ValueError(f"big {n}")
    t1 = x - obj.count
    try:
        for i2 in range(n):
            v3 = x.tolist()
        t1 = maybe_raise(t1, n)
        t4 = d.popitem()[1] if d else y
    except (KeyError, IndexError, ValueError, RuntimeError) as e:
        print("caught", type(e).__name__, e)
        xs.append(y.clamp(-2, 2))
    return y, t1, x, t0

def make_inputs(k):
    rng = np.random.RandomState(k)

    def t():
        return dl.tensor(rng.randint(-3, 4, size=(3, 4)).astype("float32"))

    d = {"a": t(), "b": t()}
    if k == 1:
        d["c"] = t()
    return t(), t(), 1 + k % 2, [t() for _ in range(2 + k % 2)], d, Box(t())

