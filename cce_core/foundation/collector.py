"""Pausing Python's cyclic garbage collector around a burst of short-lived, cycle-free objects.

Why this exists: a walk of a large tree and a tree-sitter query over a file
each make tens of thousands of small objects that hold no reference cycle and
die by reference counting. While they pile up, the cyclic collector walks them
again and again for nothing. Pausing it for the burst is the one policy both
places use; it is written once here.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Keep the cyclic collector off inside the block; on again after it only if it was on before.

    Process-wide: meant for the thread doing the work, while no other thread
    switches the collector on or off.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
