"""Counts from any engine: naive Bayes's sufficient statistics computed where the data live.

A naive Bayes release needs only the counts of eq. (10): rows per class and, for
each attribute, rows per (class, value). Any SQL engine computes them in one
query without moving a row (DuckDB on a Parquet file, Spark on a cluster, a
warehouse); :meth:`lib.models.naive_bayes.PrivateNaiveBayes.fit_counts` then
releases the model from them exactly as ``fit`` would from the rows. This
module writes the query (:func:`counts_sql`) and turns its result rows into
the tables over the *public* domain (:func:`tables_from_rows`).

The query is built by sqlglot (the ``counts`` extra) from identifiers, never
by pasting text: every name is a quoted identifier of the target dialect
(``"marital-status"`` in DuckDB and PostgreSQL, ```marital-status``` in Spark
and BigQuery; reserved words such as ``select`` or ``order`` are quoted the
same way), and the relation is a validated table name or a sqlglot
expression. For attributes ``a``, ``b`` and label ``y`` of table ``t``, in
DuckDB::

    SELECT 0 AS "feature", CAST("y" AS TEXT) AS "label", CAST("a" AS TEXT) AS "value", COUNT(*) AS "n"
      FROM "t" GROUP BY "y", "a"
    UNION ALL
    SELECT 1 AS "feature", CAST("y" AS TEXT) AS "label", CAST("b" AS TEXT) AS "value", COUNT(*) AS "n"
      FROM "t" GROUP BY "y", "b"

**One text type for every value.** A string column beside an integer-coded
one cannot share a UNION's column as themselves (DuckDB would cast the codes
to text, Spark fails to cast ``'Male'`` to a number), so the label and every
value column are cast to the dialect's text type (``TEXT``/``VARCHAR`` in
DuckDB, ``STRING`` in Spark and BigQuery) in the query, and
:func:`tables_from_rows` compares that text with :func:`as_text` of each
public category: ``str(value)`` (``'3'`` for the integer 3, ``'3.0'`` for the
float, ``'Male'``), with booleans as ``'true'``/``'false'`` as both engines
write them. The class counts are the row sums of any one attribute's table
(every row has every attribute; rows with a NULL must be dropped or given a
public "missing" category first).

The domain stays public: a (class, value) pair that no row has is a 0 cell of
the table, not a missing row, and a value or class outside the declared domain
is refused (it would be a private fact about the data: the message names the
attribute and its public categories, not the value or its count).
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Sequence

import numpy as np

__all__ = ["as_text", "counts_sql", "relation_of", "tables_from_rows"]

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _sqlglot():
    try:
        import sqlglot
        from sqlglot import exp
    except ImportError as exc:  # pragma: no cover - the optional extra is missing
        raise ImportError("lib.models.counts.counts_sql needs sqlglot: pip install "
                          "\"dirichlet-mechanism-book[counts]\" (or sqlglot)") from exc
    return sqlglot, exp


def relation_of(relation: Any) -> Any:
    """The relation of :func:`counts_sql` as a sqlglot expression.

    Parameters
    ----------
    relation : str, tuple of str or sqlglot.exp.Expression
        A table name: plain identifiers joined by dots (``"adult"``,
        ``"warehouse.census.adult"``, at most three parts), each quoted in the
        query; a tuple of name parts for names that are not plain identifiers
        (``("my-catalog", "census", "adult 2024")``); or a sqlglot expression: a
        ``Table``, or a ``Select``/``Subquery`` (a parsed relation, e.g.
        ``sqlglot.parse_one("SELECT * FROM read_parquet('adult.parquet')")``),
        used as a subquery.

    Raises
    ------
    ValueError
        On a string that is not a dotted name of plain identifiers (nothing
        is pasted into the query), an empty part, or more than three parts.
    TypeError
        On anything else.
    """
    _, exp = _sqlglot()
    if isinstance(relation, str):
        parts = relation.split(".")
        if not all(_IDENTIFIER.fullmatch(p) for p in parts):
            raise ValueError(f"relation must be a table name of plain identifiers joined by dots (letters, digits "
                             f"and _; give a tuple of parts for other names, or a sqlglot expression); got "
                             f"{relation!r:.80}")
    elif isinstance(relation, tuple):
        parts = list(relation)
        if not all(isinstance(p, str) and p for p in parts):
            raise ValueError(f"relation parts must be non-empty strings; got {relation!r:.80}")
    elif isinstance(relation, exp.Table):
        return relation
    elif isinstance(relation, (exp.Select, exp.Union)):
        return relation.subquery("counted_relation")
    elif isinstance(relation, exp.Subquery):
        return relation if relation.alias else relation.as_("counted_relation")
    else:
        raise TypeError(f"relation must be a table name, a tuple of name parts or a sqlglot Table/Select "
                        f"expression; got {type(relation).__name__}")
    if not 1 <= len(parts) <= 3:
        raise ValueError(f"relation must have 1 to 3 name parts (catalog.schema.table); got {len(parts)}")
    names = [exp.to_identifier(p, quoted=True) for p in parts]
    catalog, db, table = [None] * (3 - len(names)) + names
    return exp.Table(this=table, db=db, catalog=catalog)


def counts_sql(relation: Any, features: Sequence[str], label: str, *, dialect: str = "duckdb") -> str:
    """The one SQL query whose result rows ``(feature, label, value, n)`` hold every count.

    Parameters
    ----------
    relation : str, tuple of str or sqlglot expression
        The table (see :func:`relation_of`): never pasted as text.
    features : sequence of str
        The attribute columns, in the model's order (any names: each is a
        quoted identifier).
    label : str
        The class column.
    dialect : str, default "duckdb"
        The SQL dialect to write, any that sqlglot knows: ``"duckdb"``,
        ``"spark"`` (also Databricks), ``"bigquery"``, ``"postgres"``,
        ``"snowflake"``, ...

    Returns
    -------
    str
        One ``UNION ALL`` of one ``GROUP BY`` per attribute; the label and the
        values cast to the dialect's text type (see the module notes).

    Examples
    --------
    >>> print(counts_sql("t", ["a", "select"], "y", dialect="spark"))  # doctest: +NORMALIZE_WHITESPACE
    SELECT 0 AS `feature`, CAST(`y` AS STRING) AS `label`, CAST(`a` AS STRING) AS `value`, COUNT(*) AS `n`
    FROM `t` GROUP BY `y`, `a` UNION ALL SELECT 1 AS `feature`, CAST(`y` AS STRING) AS `label`,
    CAST(`select` AS STRING) AS `value`, COUNT(*) AS `n` FROM `t` GROUP BY `y`, `select`
    """
    sqlglot, exp = _sqlglot()
    try:
        sqlglot.Dialect.get_or_raise(dialect)
    except (ValueError, TypeError):
        raise ValueError(f"dialect must be a SQL dialect sqlglot knows (e.g. 'duckdb', 'spark', 'bigquery', "
                         f"'postgres'); got {dialect!r:.40}") from None
    if isinstance(features, (str, bytes)):
        raise ValueError("features must be a sequence of column names, not one string")
    features = list(features)
    if not features:
        raise ValueError("features must name at least one column")
    for name, what in [(label, "label")] + [(f, f"features[{k}]") for k, f in enumerate(features)]:
        if not isinstance(name, str) or not name:
            raise ValueError(f"{what} must be a non-empty column name; got {name!r:.60}")
    source = relation_of(relation)
    text = exp.DataType.build("text")

    def named(expression, alias):
        return exp.alias_(expression, exp.to_identifier(alias, quoted=True))

    y = exp.column(exp.to_identifier(label, quoted=True))
    branches = []
    for k, name in enumerate(features):
        column = exp.column(exp.to_identifier(name, quoted=True))
        branches.append(exp.select(named(exp.Literal.number(k), "feature"), named(exp.cast(y.copy(), text), "label"),
                                   named(exp.cast(column.copy(), text), "value"),
                                   named(exp.Count(this=exp.Star()), "n"))
                        .from_(source.copy()).group_by(y.copy(), column))
    query = branches[0]
    for branch in branches[1:]:
        query = exp.union(query, branch, distinct=False)
    return query.sql(dialect=dialect)


def as_text(value: Any) -> str:
    """A public category as the query's text cast writes it: ``str(value)``, booleans as ``'true'``/``'false'``.

    Examples
    --------
    >>> as_text(3), as_text(np.int64(3)), as_text(2.5), as_text("Male"), as_text(True)
    ('3', '3', '2.5', 'Male', 'true')
    """
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, np.generic):
        value = value.item()
    return str(value)


def tables_from_rows(rows: Iterable[Sequence[Any]], categories: Sequence[Sequence[Any]],
                     classes: Sequence[Any]) -> tuple[np.ndarray, list[np.ndarray]]:
    """Class counts and attribute tables over the public domain, from the rows of :func:`counts_sql`.

    Parameters
    ----------
    rows : iterable of (feature, label, value, n)
        The query's result (e.g. ``duckdb.sql(q).fetchall()``,
        ``spark.sql(q).collect()``); ``feature`` is the attribute's index,
        ``label`` and ``value`` as the query's text (or as stored: they are
        compared through :func:`as_text`).
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
        that is not a non-negative whole number, or tables whose row sums
        differ. The rows are private: a message names the attribute and the
        public domain, never a value, a label or a count.
    """
    cats = [list(c) for c in categories]
    classes = list(classes)
    if not cats or any(len(c) < 2 for c in cats) or len(classes) < 2:
        raise ValueError("categories must list at least 2 values per attribute and classes at least 2 labels")
    value_index = [{as_text(v): i for i, v in enumerate(c)} for c in cats]
    class_index = {as_text(c): i for i, c in enumerate(classes)}
    for k, (c, index) in enumerate(zip(cats, value_index)):
        if len(index) != len(c):
            raise ValueError(f"categories[{k}] holds two values with the same text {c!r:.100}")
    if len(class_index) != len(classes):
        raise ValueError(f"classes holds two labels with the same text {classes!r:.100}")
    tables = [np.zeros((len(classes), len(c)), dtype=np.float64) for c in cats]
    seen = set()
    for row in rows:
        feature, label, value, n = row
        if isinstance(feature, str) and feature.isdigit():
            feature = int(feature)
        if isinstance(feature, (bool, np.bool_)) or not (
                isinstance(feature, (int, np.integer)) and 0 <= feature < len(cats)):
            raise ValueError(f"feature must be an attribute index in [0, {len(cats) - 1}]; a row holds another")
        feature = int(feature)
        j = class_index.get(as_text(label)) if label is not None else None
        if j is None:
            raise ValueError(f"a label of attribute {feature}'s rows is not among the public classes "
                             f"{classes!r:.100} (which one, and its count, are not shown: the rows are private)")
        c = value_index[feature].get(as_text(value)) if value is not None else None
        if c is None:
            raise ValueError(f"a value of attribute {feature} is not among its public categories "
                             f"{cats[feature]!r:.100} (which one, and its count, are not shown: the rows are "
                             "private; NULLs must be dropped or given a public category)")
        if isinstance(n, (bool, np.bool_)) or not (isinstance(n, (int, np.integer)) or (
                isinstance(n, (float, np.floating)) and float(n).is_integer())) or n < 0:
            raise ValueError(f"n must be a non-negative whole number; a row of attribute {feature} holds another")
        key = (feature, j, c)
        if key in seen:
            raise ValueError(f"a cell of attribute {feature} (class {classes[j]!r}, value {cats[feature][c]!r}) "
                             "appears twice")
        seen.add(key)
        tables[feature][j, c] = n
    class_counts = tables[0].sum(axis=1)
    for k, t in enumerate(tables[1:], 1):
        if not np.array_equal(t.sum(axis=1), class_counts):
            raise ValueError(f"attribute {k}'s table counts other rows per class than attribute 0's: every row "
                             "must have every attribute (drop or recode NULLs before counting)")
    return class_counts, tables
