# fuzz-case: seed=0 backend=eager kind=fallback (the most common fallback of the fuzz corpus: a print in an except clause made the whole frame run eagerly; it now compiles, with the exception routed to a resume function at the clause, NOTE: [breaks inside try/except])
import numpy as np
import dynamo_lite as dl

G_count = 0


def maybe_raise(v, k):
    if k > 1:
        raise ValueError(f"k too big: {k}")
    return v * k


def f(x, xs, d, k):
    global G_count
    y = x * 2
    try:
        with dl.no_grad():
            y = y + xs[k]
        t = d["zz"] if k == 0 else maybe_raise(y, k)
        y = y - t
    except (KeyError, IndexError, ValueError, RuntimeError) as e:
        print("caught", type(e).__name__, e)
        y = y + k
    finally:
        G_count += 1
    return y * 3, G_count


def make_inputs(k):
    rng = np.random.RandomState(k)
    t = lambda: dl.tensor(rng.randint(-3, 4, size=(3, 4)).astype("float32"))
    return t(), [t() for _ in range(2 + k % 2)], {"a": t()}, k
