"""``hopgraph.core.linalg.unit``: the one unit-normaliser of ingest, retrieval and the embedders."""

from __future__ import annotations

import numpy as np

from hopgraph.core.linalg import unit


def test_unit_scales_vectors_and_rows_and_keeps_zeros() -> None:
    assert np.array_equal(unit([3.0, 4.0]), np.array([0.6, 0.8], dtype=np.float32))
    assert unit([3.0, 4.0]).dtype == np.float32 and unit([3.0, 4.0], dtype=np.float64).dtype == np.float64
    rows = unit(np.array([[3.0, 4.0], [0.0, 0.0], [0.0, 2.0]]))
    assert np.array_equal(rows, np.array([[0.6, 0.8], [0.0, 0.0], [0.0, 1.0]], dtype=np.float32))
    assert np.array_equal(unit(np.zeros(3)), np.zeros(3, dtype=np.float32))


def test_a_row_has_the_same_bits_alone_or_among_others() -> None:
    m = np.random.default_rng(0).standard_normal((50, 384)).astype(np.float32)
    whole = unit(m)
    assert all(np.array_equal(whole[k], unit(m[k:k + 1])[0]) for k in range(len(m)))
    assert np.allclose(np.linalg.norm(whole, axis=1), 1.0, atol=1e-6)
