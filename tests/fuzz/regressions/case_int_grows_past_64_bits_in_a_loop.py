# fuzz-case: seed=3791 backend=eager kind=exception (a while loop squares an int until `y + n` overflows; the meta rule did not check the int, so tracing kept unrolling with ever larger ints instead of raising OverflowError where eager does)
import numpy as np
import dynamo_lite as dl


def f(x, y, n, xs):
    w = 0
    while w < n:
        w += 1
        y = y + n
        n = n * 7 + n ** 2
    xs.append(n)
    return y, n


def make_inputs(k):
    return dl.ones(3, 4) + k, dl.ones(3, 4) * k, 1 + k % 2, [dl.ones(2)]
