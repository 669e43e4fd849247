"""Shared by the Python tests: the devices under test and a comparison against a reference."""
import os

import numpy as np
import pytest

import porta


def devices_under_test():
    """PORTA_TEST_DEVICES (specs separated by ',' or ';'), else every device of this build, and ref."""
    text = os.environ.get("PORTA_TEST_DEVICES", "")
    specs = [s for s in text.replace(";", ",").split(",") if s] or [d.spec for d in porta.devices()]
    return ["ref"] + [s for s in specs if s != "ref"]


@pytest.fixture(params=devices_under_test())
def device(request):
    try:
        return porta.Device(request.param)
    except porta.Error as e:
        if e.code in (porta.ErrorCode.NotFound, porta.ErrorCode.DeviceUnavailable):
            pytest.skip(f"device {request.param}: {e.message}")
        raise


def assert_close(got, want, tolerance=1e-4):
    """Every element within `tolerance` of want, relative to want's largest magnitude (at least 1)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape
    scale = max(1.0, float(np.abs(want).max(initial=0)))
    worst = float(np.abs(got - want).max(initial=0)) / scale
    assert worst <= tolerance, f"largest difference {worst:.3g} relative to {scale:.3g}"


def random(shape, seed=0, low=-1.0, high=1.0):
    return np.random.default_rng(seed).uniform(low, high, shape).astype(np.float32)
