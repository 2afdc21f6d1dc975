"""Work and Future: the handles of a collective started with ``async_op=True``.

NOTE: [collective completion] A group starts a collective and returns a ``Work`` holding
whatever must stay alive until it completes (the request and the arrays it reads and
writes) and a ``finish`` step run exactly once after completion (copying a staging buffer
back into a non-contiguous tensor, dividing for AVG, filling an output list). ``wait()``
blocks; ``is_completed()`` polls (and so drives an MPI library's progress). ``Future``
chains ``then`` callbacks on a Work's result, as DDP communication hooks need.
"""
from __future__ import annotations


class Work:
    """A started collective: ``wait()`` blocks until it completed, ``is_completed()`` polls.

    Args:
        request: an object with ``Wait()`` and ``Test() -> bool`` (an MPI request), or None when done.
        result: the tensors the collective produced (``Work.result()``).
        finish: called once after completion, before ``wait`` returns.
        keep: objects that must stay alive while the collective runs (its buffers).

    Example:
        >>> work = dl.distributed.all_reduce(t, async_op=True)
        >>> work.wait()
        True
    """

    def __init__(self, request=None, result=(), finish=None, keep=()):
        self._request = request
        self._result = list(result)
        self._finish = finish
        self._keep = keep
        self._done = False
        if request is None:
            self._complete()

    def _complete(self) -> None:
        if self._done:
            return
        self._done = True
        finish, self._finish, self._keep, self._request = self._finish, None, None, None
        if finish is not None:
            finish()

    def _then_finish(self, finish) -> Work:
        """Run ``finish`` after the finish steps already given, once the collective completed."""
        if finish is None:
            return self
        if self._done:
            finish()
        elif self._finish is None:
            self._finish = finish
        else:
            first = self._finish
            self._finish = lambda: (first(), finish())
        return self

    def wait(self, timeout=None) -> bool:
        """Block until the collective completed; True."""
        if not self._done:
            self._request.Wait()
            self._complete()
        return True

    def is_completed(self) -> bool:
        """Whether the collective completed (a non-blocking test)."""
        if not self._done and self._request.Test():
            self._complete()
        return self._done

    def is_success(self) -> bool:
        return self.is_completed()

    def exception(self):
        return None

    def result(self) -> list:
        """The tensors the collective produced (after ``wait``)."""
        self.wait()
        return self._result

    def synchronize(self) -> None:
        self.wait()

    def get_future(self) -> Future:
        """A Future whose value is ``result()``."""
        return Future(self, lambda work: work.result())


class Future:
    """The value of a Work once it completed, through ``then`` callbacks (torch.futures.Future).

    Example:
        >>> fut = dl.distributed.all_reduce(t, async_op=True).get_future()
        >>> fut.then(lambda f: f.value()[0] * 2).wait()
    """

    def __init__(self, work=None, compute=None, value=None):
        self._work = work
        self._compute = compute
        self._has_value = work is None
        self._value = value

    def done(self) -> bool:
        """Whether the value is ready (polls the underlying collective)."""
        return self._has_value or self._work.is_completed()

    def wait(self):
        """Block until ready; the value."""
        if not self._has_value:
            self._work.wait()
            self._value = self._compute(self._work)
            self._has_value = True
            self._work = self._compute = None
        return self._value

    def value(self):
        """The value (waits when not ready yet)."""
        return self.wait()

    def then(self, callback) -> Future:
        """A Future whose value is ``callback(self)``, computed when this one is ready."""
        return Future(_Chained(self), lambda chained: callback(chained.future))

    def set_result(self, value) -> None:
        self._value, self._has_value = value, True


class _Chained:
    """A Future seen as a Work (``wait``/``is_completed``) by the Future chained after it."""

    def __init__(self, future: Future):
        self.future = future

    def wait(self) -> bool:
        self.future.wait()
        return True

    def is_completed(self) -> bool:
        return self.future.done()
