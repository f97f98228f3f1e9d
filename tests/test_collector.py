"""The collector pause: off inside the block, back as it was after, even when the block raises."""

from __future__ import annotations

import gc

import pytest

from cce_core.foundation.collector import collector_paused


@pytest.mark.parametrize("was_on", [True, False])
def test_the_collector_is_off_inside_and_as_it_was_after(was_on):
    (gc.enable if was_on else gc.disable)()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert gc.isenabled() is was_on
        with pytest.raises(ValueError), collector_paused():
            raise ValueError("the block failed")
        assert gc.isenabled() is was_on
    finally:
        gc.enable()
