"""``nose.tools``: decorators and assertions MXNet's test files use, written for pytest."""
import functools
import re
import time
import unittest


def make_decorator(func):
    """Return a decorator that makes its wrapper look like ``func`` (name, doc, attributes)."""
    def decorate(wrapper):
        wrapper = functools.wraps(func)(wrapper)
        wrapper.__wrapped__ = func
        return wrapper
    return decorate


def raises(*exceptions):
    """The decorated test passes only if it raises one of ``exceptions``."""
    def decorate(func):
        @functools.wraps(func)
        def test(*args, **kwargs):
            try:
                func(*args, **kwargs)
            except exceptions:
                return
            names = " or ".join(e.__name__ for e in exceptions)
            raise AssertionError("%s() did not raise %s" % (func.__name__, names))
        return test
    return decorate


class TimeExpired(AssertionError):
    """A ``timed`` test took longer than its limit."""


def timed(limit):
    """The decorated test fails if it takes more than ``limit`` seconds."""
    def decorate(func):
        @functools.wraps(func)
        def test(*args, **kwargs):
            start = time.time()
            result = func(*args, **kwargs)
            if time.time() - start > limit:
                raise TimeExpired("time limit (%s) exceeded" % limit)
            return result
        return test
    return decorate


def with_setup(setup=None, teardown=None):
    """Run ``setup`` before and ``teardown`` after the decorated test."""
    def decorate(func):
        @functools.wraps(func)
        def test(*args, **kwargs):
            if setup is not None:
                setup()
            try:
                return func(*args, **kwargs)
            finally:
                if teardown is not None:
                    teardown()
        return test
    return decorate


def istest(func):
    """Mark ``func`` as a test."""
    func.__test__ = True
    return func


def nottest(func):
    """Mark ``func`` as not a test."""
    func.__test__ = False
    return func


def ok_(expr, msg=None):
    """Assert ``expr`` is true."""
    if not expr:
        raise AssertionError(msg)


def eq_(a, b, msg=None):
    """Assert ``a == b``."""
    if not a == b:
        raise AssertionError(msg or "%r != %r" % (a, b))


def set_trace():
    """Not available under the runner (tests run without a terminal)."""
    raise RuntimeError("nose.tools.set_trace is not available here")


def _pep8(name):
    return re.sub("([A-Z])", lambda m: "_" + m.group(1).lower(), name)


# assert_equal, assert_raises, assert_true, ...: unittest's assertion methods under nose's
# snake_case names, bound to one TestCase.
_case = unittest.TestCase("__init__")
__all__ = ["make_decorator", "raises", "timed", "TimeExpired", "with_setup", "istest",
           "nottest", "ok_", "eq_", "set_trace"]
for _name in dir(_case):
    if _name.startswith("assert") and "_" not in _name and not _name.endswith("_"):
        globals()[_pep8(_name)] = getattr(_case, _name)
        __all__.append(_pep8(_name))
del _name
