"""`check_options`, shared by LmdbSaver and LmdbStore: no process-wide cache.

A cache keyed by the arguments kept every environment passed to a saver alive for the
life of the process, and turned an unhashable argument into `TypeError: unhashable
type` instead of the documented ValueError.
"""

from __future__ import annotations

import gc
import re
import weakref

import pytest

from lgembed.checkpoint._lmdb_env import check_options


def test_unhashable_value_gets_the_documented_error():
    with pytest.raises(ValueError, match=re.escape("'map_size' must be a positive int (got [1])")):
        check_options("db", None, [1], 2)
    with pytest.raises(ValueError, match=re.escape("'flush_every' must be a positive int or None (got {})")):
        check_options("db", None, 1, 2, flush_every={})


def test_environment_is_not_kept_alive():
    class Env:  # stands for an lmdb.Environment given positionally
        pass

    env = Env()
    ref = weakref.ref(env)
    assert check_options(env, None, 1, 2) == (None, env)
    del env
    gc.collect()
    assert ref() is None
