"""Counts from any engine: naive Bayes's sufficient statistics computed where the data live.

A naive Bayes release needs only the counts of eq. (10): rows per class and, for
each attribute, rows per (class, value). Any SQL engine computes them in one
query without moving a row (DuckDB on a Parquet file, Spark, a warehouse);
:meth:`lib.models.naive_bayes.PrivateNaiveBayes.fit_counts` then releases the model
from them exactly as ``fit`` would from the rows. This module writes the query
(:func:`counts_sql`) and turns its result rows into the tables over the *public*
domain (:func:`tables_from_rows`). Neither needs a database package.

The query (for attributes ``a``, ``b`` and label ``y`` of table ``t``) is plain SQL::

    SELECT 0 AS feature, y AS label, a AS value, COUNT(*) AS n FROM t GROUP BY y, a
    UNION ALL
    SELECT 1 AS feature, y AS label, b AS value, COUNT(*) AS n FROM t GROUP BY y, b

and runs unchanged in DuckDB (``duckdb.sql(q).fetchall()``), Spark
(``spark.sql(q).collect()``), PostgreSQL, BigQuery or Snowflake. The class counts
are the row sums of any one attribute's table (every row has every attribute;
rows with a NULL must be dropped or given a public "missing" category first).

The domain stays public: a (class, value) pair that no row has is a 0 cell of
the table, not a missing row, and a value or class outside the declared domain
is refused (it would be a private fact about the data).
"""

from __future__ import annotations

import re

import numpy as np

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def _quoted(name: str, what: str) -> str:
    if not isinstance(name, str) or not name:
        raise ValueError(f"{what} must be a non-empty column or table name; got {name!r}")
    if _IDENTIFIER.fullmatch(name):
        return name
    return '"' + name.replace('"', '""') + '"'


def counts_sql(table: str, features, label: str) -> str:
    """The one SQL query whose result rows ``(feature, label, value, n)`` hold every count.

    ``table`` may be a table name or a source such as ``read_parquet('data.parquet')``
    (passed through as written when it contains a parenthesis); column names that
    are not plain identifiers are double-quoted.

    Examples
    --------
    >>> print(counts_sql("t", ["a", "b"], "y"))
    SELECT 0 AS feature, y AS label, a AS value, COUNT(*) AS n FROM t GROUP BY y, a
    UNION ALL
    SELECT 1 AS feature, y AS label, b AS value, COUNT(*) AS n FROM t GROUP BY y, b
    """
    features = list(features)
    if not features:
        raise ValueError("features must name at least one column")
    source = table if isinstance(table, str) and "(" in table else _quoted(table, "table")
    y = _quoted(label, "label")
    parts = [f"SELECT {k} AS feature, {y} AS label, {_quoted(f, f'features[{k}]')} AS value, COUNT(*) AS n "
             f"FROM {source} GROUP BY {y}, {_quoted(f, f'features[{k}]')}" for k, f in enumerate(features)]
    return "\nUNION ALL\n".join(parts)


def tables_from_rows(rows, categories, classes):
    """Class counts and attribute tables over the public domain, from the rows of :func:`counts_sql`.

    Parameters
    ----------
    rows : iterable of (feature, label, value, n)
        The query's result (e.g. ``duckdb.sql(q).fetchall()``); ``feature`` is the
        attribute's index, ``label`` and ``value`` as stored in the table.
    categories : list of sequences, one per attribute
        The public values of each attribute, in code order (``range(n_k)`` for
        integer codes).
    classes : sequence
        The public class labels, in code order.

    Returns
    -------
    class_counts : ndarray, shape (d,)
    feature_counts : list of ndarray, shape (d, n_k)
        What :func:`lib.models.naive_bayes.count` returns for the same rows.

    Raises
    ------
    ValueError
        On a value or class outside the public domain, a repeated cell, a count
        that is not a non-negative whole number, or tables whose row sums differ.
    """
    cats = [list(c) for c in categories]
    classes = list(classes)
    if not cats or any(len(c) < 2 for c in cats) or len(classes) < 2:
        raise ValueError("categories must list at least 2 values per attribute and classes at least 2 labels")
    value_index = [{v: i for i, v in enumerate(c)} for c in cats]
    class_index = {c: i for i, c in enumerate(classes)}
    tables = [np.zeros((len(classes), len(c)), dtype=np.float64) for c in cats]
    seen = set()
    for row in rows:
        feature, label, value, n = row
        if not (isinstance(feature, (int, np.integer)) and 0 <= feature < len(cats)):
            raise ValueError(f"feature must be an attribute index in [0, {len(cats) - 1}]; got {feature!r}")
        if label not in class_index:
            raise ValueError(f"label {label!r} is not among the public classes {classes!r:.100}")
        if value not in value_index[feature]:
            raise ValueError(f"value {value!r} of attribute {feature} is not among its public categories "
                             f"{cats[feature]!r:.100}")
        if not (isinstance(n, (int, np.integer)) or (isinstance(n, float) and n.is_integer())) or n < 0:
            raise ValueError(f"n must be a non-negative whole number; got {n!r}")
        key = (int(feature), class_index[label], value_index[feature][value])
        if key in seen:
            raise ValueError(f"the cell (attribute {feature}, class {label!r}, value {value!r}) appears twice")
        seen.add(key)
        tables[key[0]][key[1], key[2]] = n
    class_counts = tables[0].sum(axis=1)
    for k, t in enumerate(tables[1:], 1):
        if not np.array_equal(t.sum(axis=1), class_counts):
            raise ValueError(f"attribute {k}'s table counts {t.sum(axis=1).tolist()} rows per class, attribute "
                             f"0's {class_counts.tolist()}: every row must have every attribute (drop or "
                             "recode NULLs before counting)")
    return class_counts, tables
