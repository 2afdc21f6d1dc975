# fuzz-case: seed=1582 backend=eager kind=crash (SIGSEGV: a break at WITH_EXCEPT_START in a with block's cleanup, reached by an exception raised in an except clause, resumed there with the interpreter's stale offset (lasti) on the stack; breaks inside a cleanup's own code run the frame eagerly again)
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
        return self._v * 2
    def __setattr__(self, name, value):
        object.__setattr__(self, "sets", self.__dict__.get("sets", 0) + 1)
        object.__setattr__(self, name, value)
def maybe_raise(v, k):
    G_list.append(k)
    if k > 1:
        raise ValueError(f"k too big: {k}")
    return v * k

def f(x, y, n, xs, d, obj):
    global G_count, G_t
    y = x - obj.count
    with dl.no_grad():
        try:
            print("t", x)
            i0 = obj.count
            obj.count += 1
            y = xs[n + 1]
            y += y
        except (KeyError, IndexError, ValueError, RuntimeError) as e:
            print("caught", type(e).__name__, e)
            t1 = maybe_raise(y, n)
        d2 = dict(d)
        xs[:1] = [y]
    w3 = 0
    while w3 < n:
        w3 += 1
        x = x.amax(1, keepdim=True) * x
    w4 = 0
    while w4 < n:
        w4 += 1
        t5 = (x > 0).float() * x
    obj.extra = n
    t6 = x * n
    t7 = y * G_cfg['scale'] + G_t
    print("s", t6.sum().item())
    return y, t7, x, d

def make_inputs(k):
    rng = np.random.RandomState(k)

    def t():
        return dl.tensor(rng.randint(-3, 4, size=(3, 4)).astype("float32"))

    d = {"a": t(), "b": t()}
    if k == 1:
        d["c"] = t()
    return t(), t(), 1 + k % 2, [t() for _ in range(2 + k % 2)], d, Box(t())

