"""`mna.subnormals.flushed`: subnormal numbers are zero inside, and the mode comes back."""

import numpy as np
import pytest

from mna import subnormals

pytestmark = pytest.mark.skipif(subnormals._fenv() is None,
                                reason="the floating-point environment's layout is not known here")

TINY = np.array([1e-300])


def test_subnormal_results_and_inputs_are_zero_inside_only():
    assert (TINY * 1e-10)[0] == pytest.approx(1e-310, rel=1e-3)   # subnormal outside
    with subnormals.flushed():
        assert (TINY * 1e-10)[0] == 0.0                           # flushed result
        assert (np.array([5e-324]) * 1e300)[0] == 0.0             # subnormal input read as 0
        assert (TINY * 1e-3)[0] == 1e-300 * 1e-3                  # normal numbers untouched
    assert (TINY * 1e-10)[0] == pytest.approx(1e-310, rel=1e-3)


def test_the_mode_comes_back_after_an_exception():
    with pytest.raises(KeyError), subnormals.flushed():
        raise KeyError
    assert (TINY * 1e-10)[0] != 0.0
