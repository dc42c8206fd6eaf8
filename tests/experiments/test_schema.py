"""lib.experiments.schema: the encoding of a column by its public domain."""

from __future__ import annotations

import numpy as np
import pytest


def test_schema_encode_equals_the_row_by_row_lookup():
    """schema.encode looks each distinct value up once; the codes are those of one dictionary
    look-up per row (missing values -> 'other' or refused), on mixed, missing and unlisted values."""
    import pandas as pd

    from lib.experiments.schema import Domain, encode

    rng = np.random.default_rng(7)
    pool = np.array(["a", "b", "c", "zz", None, np.nan, pd.NA, 1, 1.0, 2, "?"], dtype=object)
    values = pool[rng.integers(0, len(pool), 5000)]
    for listed, other in ((("a", "b", "c", 1), True), (("c", "a", 2), True)):
        domain = Domain(values=listed, other=other, kind="doc", source="test")
        index = {v: i for i, v in enumerate(listed)}
        expected = np.array([len(listed) if pd.isna(v) or v not in index else index[v] for v in values])
        assert np.array_equal(encode(values, domain, "x"), expected)
    closed = Domain(values=("a", "b", "c", "zz", "?", 1, 2), other=False, kind="doc", source="test")
    with pytest.raises(ValueError, match="outside its public domain"):
        encode(values, closed, "x")
    assert np.array_equal(encode(np.array(["?", "zz", "a"], dtype=object), closed, "x"), [4, 3, 0])
