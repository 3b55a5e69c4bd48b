"""Percentiles of measured values, one way for every benchmark."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def percentile(values: Iterable[float], q: float, *, digits: int | None = None,
               method: str = "linear", empty: float | None = None) -> float | None:
    """The ``q``-th percentile (0-100) of ``values``, ``empty`` when there are none; rounded to
    ``digits`` when given. ``method`` is numpy's: "linear" interpolates between the two nearest
    values; "higher" is always a measured value (the nearest rank at or above: the capacity and
    caption-page figures are reported that way)."""
    data = np.fromiter(values, float)
    if data.size == 0:
        return empty
    value = float(np.percentile(data, q, method=method))
    return round(value, digits) if digits is not None else value
