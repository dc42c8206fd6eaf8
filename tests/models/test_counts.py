"""Counts from any engine (issue 27): the SQL of lib.models.counts in DuckDB equals numpy's count, and the
model released from them equals the model fitted on the rows (the example at 1e5 rows)."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from lib.privacy.guarantees import RenyiDP
from lib.models.counts import counts_sql, tables_from_rows
from lib.models.naive_bayes import PrivateNaiveBayes, count

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("duckdb_counts", ROOT / "examples" / "duckdb_counts.py")
example = importlib.util.module_from_spec(spec)
spec.loader.exec_module(example)


def test_the_example_at_1e5_rows_equals_the_in_memory_fit(tmp_path):
    pytest.importorskip("duckdb")
    n = 100_000
    path = tmp_path / "t.parquet"
    example.write_parquet(path, n, seed=3, chunk=30_000)        # chunks of uneven size on purpose
    rows = example.count_with_duckdb(path)
    X = np.concatenate([x for x, _ in example.chunks(n, 3, 30_000)]).astype(np.int64)
    y = np.concatenate([y for _, y in example.chunks(n, 3, 30_000)]).astype(np.int64)
    N, Nk = count(X, y, list(example.N_VALUES), 2)
    N2, Nk2 = tables_from_rows(rows, [range(v) for v in example.N_VALUES], example.CLASSES)
    np.testing.assert_array_equal(N, N2)
    for a, b in zip(Nk, Nk2):
        np.testing.assert_array_equal(a, b)
    assert N.sum() == n and (N > 0).all()
    fitted = example.release(rows, epsilon=1.0, random_state=8)
    direct = PrivateNaiveBayes("dirichlet", privacy=RenyiDP(5.0, 1.0), random_state=8).fit(
        X, y, n_values=list(example.N_VALUES), n_classes=2)
    np.testing.assert_array_equal(fitted.class_log_prior_, direct.class_log_prior_)
    for a, b in zip(fitted.feature_log_prob_, direct.feature_log_prob_):
        np.testing.assert_array_equal(a, b)
    assert fitted.classes_.tolist() == list(example.CLASSES)


def test_the_data_do_not_depend_on_the_chunk_size():
    a = np.concatenate([x for x, _ in example.chunks(5000, 1, 5000)])
    b = np.concatenate([x for x, _ in example.chunks(5000, 1, 1000)])
    # chunk-wise seeds: the same chunking gives the same table (a different chunking is another table)
    assert a.shape == b.shape == (5000, 4)
    np.testing.assert_array_equal(a, np.concatenate([x for x, _ in example.chunks(5000, 1, 5000)]))


def test_tables_from_rows_refuse_what_the_public_domain_does_not_hold():
    cats, classes = [range(2), ["a", "b", "c"]], ["n", "y"]
    rows = [(0, "n", 0, 2), (0, "y", 1, 3), (1, "n", "a", 2), (1, "y", "c", 3)]
    N, (t0, t1) = tables_from_rows(rows, cats, classes)
    assert N.tolist() == [2, 3] and t1.tolist() == [[2, 0, 0], [0, 0, 3]]   # unseen cells are 0
    with pytest.raises(ValueError, match="'d' of attribute 1 is not among"):
        tables_from_rows(rows + [(1, "n", "d", 0)], cats, classes)
    with pytest.raises(ValueError, match="label 'm'"):
        tables_from_rows(rows + [(0, "m", 0, 1)], cats, classes)
    with pytest.raises(ValueError, match="appears twice"):
        tables_from_rows(rows + [(0, "n", 0, 1)], cats, classes)
    with pytest.raises(ValueError, match="every row must have every attribute"):
        tables_from_rows(rows[:-1], cats, classes)
    with pytest.raises(ValueError, match="whole number"):
        tables_from_rows([(0, "n", 0, 2.5)] + rows[1:], cats, classes)


def test_the_sql_quotes_names_that_are_not_identifiers():
    q = counts_sql("my table", ["a b", "c"], "label")
    assert 'FROM "my table"' in q and '"a b" AS value' in q and q.count("UNION ALL") == 1
    with pytest.raises(ValueError, match="at least one"):
        counts_sql("t", [], "y")
