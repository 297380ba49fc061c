"""Vector helpers shared by ingest and retrieval (numpy), one home each."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

#: a norm below this counts as this: a zero vector stays zero instead of dividing by zero
EPS = 1e-12


def unit(v: npt.ArrayLike, dtype: npt.DTypeLike = np.float32) -> np.ndarray:
    """``v`` as ``dtype``, scaled to length 1: one vector, or each row of a matrix. Rows are scaled one by
    one, so a row's bits do not depend on the other rows; a zero vector or row stays zero."""
    a = np.asarray(v, dtype=dtype)
    if a.ndim == 1:
        return a / max(float(np.linalg.norm(a)), EPS)
    return a / np.maximum(np.linalg.norm(a, axis=-1, keepdims=True), EPS)
