"""Privacy end to end (issue 19): nothing before the mechanism looks at the private rows unaccounted.

The neighbouring-pipeline tests replace one training row of a real dataset by
another row (a row of another class, with every numerical value pushed to an
end of its public range, to move any data-dependent edge) and run the whole
pipeline on both training sets: with ``binning="public"`` everything except
the counts that go into the mechanisms must be identical (bin edges, domains,
kept attributes, classes, test rows, release shapes, calibrations), for the
naive Bayes, network and approximate-DP experiments. The same check on the
non-private ``binning="quantile"`` variant must fail somewhere, so the test
can fail.
"""

import numpy as np
import pandas as pd
import pytest

from lib.privacy.guarantees import ApproximateDP, RenyiDP
from lib.models import bayesian_network as bn
from lib.experiments import public_bounds, schema
from lib.experiments.data import DATASETS, label_column
from lib.experiments.networks import NETWORKS, network_from_split
from lib.experiments.preprocessing import (SCALES, encode_dataset, frame, prepare,
                                           public_edges, split_rows)
from lib.mechanisms.gohari import gohari_calibrate
from lib.mechanisms.gohari.mechanism import GohariMechanism
from lib.models.naive_bayes import PrivateNaiveBayes, model_spec
from lib.mechanisms.protocol import ReleaseSpec, get

DELTA = 1e-5


# ----------------------------------------------------------------------------- neighbouring data sets

def _neighbour(name, *, row=0, high=True):
    """The dataset ``name`` and a copy with training row ``row`` replaced (replace-one neighbours)."""
    original = frame(name)
    train, _ = split_rows(len(original), 1, 0.3)
    label = label_column(name)
    i = train[row]
    other_class = original.index[original[label] != original[label].iloc[i]][0]
    changed = original.copy()
    changed.iloc[i] = original.iloc[other_class]
    bounds = public_bounds.BOUNDS.get(name, {})
    for attr, b in bounds.items():        # extreme numerical values move any quantile edge
        if attr in changed.columns:
            changed.loc[changed.index[i], attr] = b.upper if high else b.lower
    return original, changed, i


def _public_parts(split, info):
    return {
        "attributes": split.attributes, "n_values": split.n_values.tolist(), "n_classes": split.n_classes,
        "classes": split.classes, "n_train": len(split.y_train),
        "edges": [None if e is None else np.asarray(e).tolist() for e in info["edges"]],
        "dropped": info["dropped (constant in train)"].tolist(),
        "X_test": split.X_test.tolist(), "y_test": split.y_test.tolist(),
    }


def _encoded_pair(name, binning, **kw):
    a, b, i = _neighbour(name, **kw)
    return encode_dataset(a, name, binning=binning), encode_dataset(b, name, binning=binning), i


@pytest.mark.needs_data
@pytest.mark.parametrize("name", DATASETS)
def test_naive_bayes_pipeline_is_identical_on_neighbours_except_the_counts(name):
    (s1, info1), (s2, info2), i = _encoded_pair(name, "public")
    assert _public_parts(s1, info1) == _public_parts(s2, info2)
    # the training rows differ in exactly one row (the replaced one), so the mechanism sees a neighbour
    differ = np.flatnonzero((s1.X_train != s2.X_train).any(axis=1) | (s1.y_train != s2.y_train))
    assert differ.size == 1
    spec1 = model_spec(s1.n_values, s1.n_classes, len(s1.y_train))
    spec2 = model_spec(s2.n_values, s2.n_classes, len(s2.y_train))
    assert spec1 == spec2
    # the fitted private models have the same shapes and calibration; only the released values differ
    m1 = PrivateNaiveBayes("dirichlet", privacy=RenyiDP(5.0, 1.0), random_state=0).fit(s1.X_train, s1.y_train, schema=s1)
    m2 = PrivateNaiveBayes("dirichlet", privacy=RenyiDP(5.0, 1.0), random_state=0).fit(s2.X_train, s2.y_train, schema=s2)
    assert [t.shape for t in m1.feature_log_prob_] == [t.shape for t in m2.feature_log_prob_]
    assert m1.calibration_.parameters == m2.calibration_.parameters


@pytest.mark.needs_data
@pytest.mark.parametrize("name", list(NETWORKS))
def test_network_pipeline_is_identical_on_neighbours_except_the_counts(name):
    (s1, info1), (s2, info2), _ = _encoded_pair(name, "public")
    n1, n2 = network_from_split(name, s1), network_from_split(name, s2)
    assert (n1.nodes, n1.parents, n1.n_values.tolist(), n1.test.tolist()) == \
        (n2.nodes, n2.parents, n2.n_values.tolist(), n2.test.tolist())
    assert (n1.train != n2.train).any(axis=1).sum() == 1
    t1 = bn.count_tables(n1.train, n1.n_values, n1.parents)
    t2 = bn.count_tables(n2.train, n2.n_values, n2.parents)
    assert [t.shape for t in t1] == [t.shape for t in t2]
    assert bn.network_spec(n1.n_values, n1.parents, len(n1.train)) == \
        bn.network_spec(n2.n_values, n2.parents, len(n2.train))
    # every table counts each record once: the grand total is the public N (Gohari on tables)
    assert all(t.sum() == len(n1.train) for t in t1)


@pytest.mark.needs_data
@pytest.mark.parametrize("name", ["GermanCredit", "Adult"])
def test_approximate_dp_calibrations_are_identical_on_neighbours(name):
    (s1, _), (s2, _), _ = _encoded_pair(name, "public")
    specs = [model_spec(s.n_values, s.n_classes, len(s.y_train)) for s in (s1, s2)]
    for mech in ("dirichlet", "gohari", "gaussian"):
        c1, c2 = (get(mech).calibrate(ApproximateDP(2.0, DELTA), spec) for spec in specs)
        assert c1.attained == c2.attained and c1.parameters == c2.parameters
    if name in NETWORKS:
        nets = [network_from_split(name, s) for s in (s1, s2)]
        nspecs = [bn.network_spec(n.n_values, n.parents, len(n.train)) for n in nets]
        c1, c2 = (get("gohari").calibrate(ApproximateDP(2.0, DELTA), spec) for spec in nspecs)
        assert c1.parameters == c2.parameters


@pytest.mark.needs_data
def test_the_quantile_variant_fails_the_same_check():
    """The check can fail: the non-private pipeline's edges move with one training row."""
    moved = []
    for name in ("GermanCredit", "Adult", "Digit"):
        for high in (True, False):
            (s1, info1), (s2, info2), _ = _encoded_pair(name, "quantile", high=high)
            if _public_parts(s1, info1) != _public_parts(s2, info2):
                moved.append((name, high))
    assert moved, "replacing a training row never changed the quantile pipeline's public parts"


@pytest.mark.needs_data
@pytest.mark.parametrize("name", DATASETS)
def test_public_pipeline_keeps_every_attribute_and_the_schema_domains(name):
    s = prepare(name, binning="public")
    full = frame(name)
    assert s.attributes == tuple(c for c in full.columns if c != label_column(name))
    doms = schema.domains(name)
    for a, n in zip(s.attributes, s.n_values):
        assert n == (doms[a].size if a in doms else 10)
    assert s.classes == schema.classes(name).values and s.n_classes == len(s.classes)
    # every value listed by the schema of the data is inside the schema or sent to an 'other' code
    assert all(schema.check(name, full, label_column(name))["other"])


# ----------------------------------------------------------------------------- public edges

def test_public_edges_rules():
    assert public_edges(0, 10, 5).tolist() == pytest.approx([2, 4, 6, 8])
    log = public_edges(0, 100, 10, "log")
    assert log[-1] == pytest.approx(100 * 10 ** -0.4) and log[0] == pytest.approx(100 * 10 ** -3.6)
    assert np.all(np.diff(np.log10(log)) == pytest.approx(0.4))      # equal steps on the log scale
    sym = public_edges(-50, 50, 10, "symlog")
    assert sym.size == 9 and sym[4] == 0 and sym[:4] == pytest.approx(-sym[:4:-1])
    for bad in [dict(scale="cubic"), dict(lower=60), dict(scale="symlog", n_bins=9)]:
        args = dict(lower=-50, upper=50, n_bins=10, scale="linear") | bad
        with pytest.raises(ValueError):
            public_edges(args["lower"], args["upper"], args["n_bins"], args["scale"])
    # every scaled attribute has a public range
    for name, scales in SCALES.items():
        public_bounds.bounds_for(name, list(scales))


def test_schema_encoding_and_refusals():
    d = schema.Domain(("a", "b"), True, "doc", "")
    assert schema.encode(["b", "a", None, "z"], d, "x").tolist() == [1, 0, 2, 2]
    with pytest.raises(ValueError, match="outside its public domain"):
        schema.encode(["c"], d._replace(other=False), "x")
    with pytest.raises(ValueError, match="dataset must be one of"):
        schema.domains("Iris")


# ----------------------------------------------------------------------------- models refuse to guess

def test_private_naive_bayes_refuses_an_inferred_domain():
    X = np.array([[0, 1], [1, 2], [1, 0]])
    y = np.array([0, 1, 1])
    for kwargs in ({}, {"n_values": [2, 3]}, {"n_classes": 2}):
        with pytest.raises(ValueError, match="must be given .*private 'dirichlet'"):
            PrivateNaiveBayes("dirichlet", privacy=RenyiDP(5.0, 1.0), random_state=0).fit(X, y, **kwargs)
    # the non-private estimate may infer it; a schema object supplies both
    assert PrivateNaiveBayes("mle").fit(X, y).n_values_.tolist() == [2, 3]

    class Schema:
        n_values, n_classes = np.array([4, 3]), 3

    m = PrivateNaiveBayes("dirichlet", privacy=RenyiDP(5.0, 1.0), random_state=0).fit(X, y, schema=Schema)
    assert m.n_values_.tolist() == [4, 3] and m.n_classes_ == 3
    with pytest.raises(ValueError, match="agree with schema"):
        PrivateNaiveBayes("dirichlet", privacy=RenyiDP(5.0, 1.0)).fit(X, y, n_classes=2, schema=Schema)


# ----------------------------------------------------------------------------- Gohari et al. on tables

def test_gohari_tables_use_the_flattened_histogram():
    spec = ReleaseSpec(((1, 3), (3, 4), (3, 2)), 500)
    cal = GohariMechanism.calibrate(ApproximateDP(3.0, DELTA), spec)
    assert cal.attained and GohariMechanism.flat_sizes(spec) == [3, 12, 6]
    for mech, d in zip(cal.releases, (3, 12, 6)):
        g = gohari_calibrate(1.0, DELTA / 3, lam=5.0, n_total=500, d=d)
        assert mech.r == g.r and mech.guarantee.epsilon == 1.0 and mech.guarantee.delta == DELTA / 3
    # a bigger flattened histogram gets a smaller r at the same share (the price of private row totals)
    assert cal.releases[1].r < gohari_calibrate(1.0, DELTA / 3, lam=5.0, n_total=500, d=4).r


def test_rows_of_one_flattened_dirichlet_are_the_row_release():
    """Normalised row blocks of Dirichlet(a) over rows*d cells are independent Dirichlet(a_row).

    The guarantee of the flattened histogram passes to the row-by-row release by
    post-processing only if the two laws agree: checked on means, variances and
    the correlation between rows, each within 5 standard errors of 40000 draws
    (a false alarm has probability below 1e-5 per statistic).
    """
    rng = np.random.default_rng(0)
    a = np.array([[0.7, 2.0, 5.0], [3.0, 0.4, 1.0]])
    n = 40000
    y = rng.dirichlet(a.ravel(), size=n).reshape(n, 2, 3)
    rows = y / y.sum(axis=2, keepdims=True)
    a0 = a.sum(axis=1, keepdims=True)
    mean = a / a0
    var = mean * (1 - mean) / (a0 + 1)
    se_mean = np.sqrt(var / n)
    assert np.all(np.abs(rows.mean(axis=0) - mean) < 5 * se_mean)
    centred = (rows - mean) ** 2
    se_var = centred.std(axis=0) / np.sqrt(n)
    assert np.all(np.abs(centred.mean(axis=0) - var) < 5 * se_var)
    corr = np.corrcoef(rows[:, 0, 0], rows[:, 1, 0])[0, 1]
    assert abs(corr) < 5 / np.sqrt(n)   # independent rows: sample correlation has sd about 1/sqrt(n)


@pytest.mark.needs_data
def test_binning_is_checked_and_the_variants_are_labelled():
    with pytest.raises(ValueError, match="binning must be one of"):
        prepare("GermanCredit", binning="deciles")
    from lib.experiments.preprocessing import encoding
    kinds = set(encoding("GermanCredit", binning="public")["kind"])
    assert kinds == {"categorical", "binned (linear)", "binned (log)"}
    assert set(encoding("GermanCredit", binning="quantile")["kind"]) == {"categorical", "binned"}


@pytest.mark.needs_data
def test_the_default_pipeline_is_the_public_one():
    """A caller who does not choose gets the private pipeline; the paper's variant is asked for by name."""
    from lib.experiments.networks import prepare_network
    assert prepare("GermanCredit") is prepare("GermanCredit", binning="public")
    assert prepare("GermanCredit") is not prepare("GermanCredit", binning="quantile")
    a, b = prepare_network("Adult"), prepare_network("Adult", binning="public")
    assert (a.train == b.train).all() and (a.n_values == b.n_values).all()


# ----------------------------------------------------------------------------- logistic regression and mixed naive Bayes

def _unusual_neighbour(name):
    """A replace-one neighbour whose new row also carries a value outside a public domain with 'other'.

    Returns the two frames, the replaced row and the attribute given the unusual value (None if no
    domain of ``name`` has an 'other' code). The unusual value is a missing one (category columns)
    or a code far above the listed ones (integer columns): a data-dependent encoding would grow a
    column or a code for it.
    """
    original, changed, i = _neighbour(name)
    # prefer an attribute whose file has no value outside its list: there a data-dependent
    # encoding would add a column or a code for the neighbour's value
    full = schema.check(name, original, label_column(name))
    seen_other = set(full["attribute"])
    with_other = [a for a, d in schema.domains(name).items() if d.other]
    attr = next((a for a in with_other if a not in seen_other), with_other[0] if with_other else None)
    if attr is not None:
        col = changed[attr]
        if isinstance(col.dtype, pd.CategoricalDtype) or not pd.api.types.is_numeric_dtype(col.dtype):
            changed.loc[changed.index[i], attr] = np.nan
        else:
            changed.loc[changed.index[i], attr] = int(max(schema.domains(name)[attr].values)) + 100
    return original, changed, i, attr


@pytest.mark.needs_data
def test_logistic_regression_encoding_is_the_schema():
    from lib.experiments.tasks import logistic_regression as glm
    a = glm.adult()
    doms = schema.domains("Adult")
    expected = []
    for attr in frame("Adult").columns:
        if attr == label_column("Adult"):
            continue
        if attr in doms:
            expected += [f"{attr}={v}" for v in doms[attr].values] + ([f"{attr}=other"] if doms[attr].other else [])
        else:
            expected.append(attr)
    assert a.columns == tuple(expected)
    assert a.X_train.shape[1] == len(glm.ADULT_BOUNDS) + sum(d.size for d in doms.values())
    # the label is the schema's class code (">50K" is class 1), on prepare's rows
    s = prepare("Adult", binning="public")
    assert schema.classes("Adult").values.index(">50K") == 1
    np.testing.assert_array_equal(a.y_train, s.y_train)
    np.testing.assert_array_equal(a.y_test, s.y_test)
    # every one-hot block has exactly one 0.5 before normalisation: recover it from the signs
    for attr in doms:
        block = [j for j, c in enumerate(a.columns) if c.startswith(f"{attr}=")]
        assert ((a.X_train[:, block] > 0).sum(axis=1) == 1).all()


@pytest.mark.needs_data
def test_logistic_regression_columns_are_identical_on_neighbours():
    from lib.experiments.tasks import logistic_regression as glm
    original, changed, i, attr = _unusual_neighbour("Adult")
    a, b = glm.adult(frame=original), glm.adult(frame=changed)
    assert a.columns == b.columns and a.X_train.shape == b.X_train.shape
    np.testing.assert_array_equal(a.X_test, b.X_test)
    np.testing.assert_array_equal(a.y_test, b.y_test)
    assert (a.X_train != b.X_train).any(axis=1).sum() == 1        # only the replaced row moves
    # the unusual value went to the 'other' column, which exists in both
    j = a.columns.index(f"{attr}=other")
    row = np.flatnonzero(a.train_rows == i)[0]
    assert b.X_train[row, j] > 0 and a.X_train[row, j] < 0
    np.testing.assert_allclose(np.linalg.norm(b.X_train, axis=1), 1.0)


@pytest.mark.needs_data
@pytest.mark.parametrize("name", DATASETS)
def test_mixed_data_domains_are_the_schema_and_identical_on_neighbours(name):
    from lib.experiments.tasks import mixed_naive_bayes as mixed
    original, changed, i, attr = _unusual_neighbour(name)
    d1, d2 = mixed.mixed_data(name, frame=original), mixed.mixed_data(name, frame=changed)
    doms = schema.domains(name)
    assert d1["categorical"] == tuple(a for a in original.columns if a in doms)
    assert d1["n_values"].tolist() == [doms[a].size for a in d1["categorical"]]
    assert d1["n_classes"] == schema.classes(name).size
    # the same attribute partition and domains as the public naive Bayes pipeline
    s = prepare(name, binning="public")
    assert set(d1["categorical"]) | set(d1["numerical"]) == set(s.attributes)
    assert d1["n_values"].tolist() == [int(s.n_values[s.attributes.index(a)]) for a in d1["categorical"]]
    # neighbours: everything public is identical, the rows differ in the replaced one only
    for key in ("categorical", "numerical", "n_classes"):
        assert d1[key] == d2[key]
    for key in ("n_values", "bounds"):
        np.testing.assert_array_equal(d1[key], d2[key])
    differ = np.flatnonzero((d1["X_cat"] != d2["X_cat"]).any(axis=1) | (d1["X_num"] != d2["X_num"]).any(axis=1)
                            | (d1["y"] != d2["y"]))
    assert differ.tolist() == [i]
    if attr is not None:
        j = d1["categorical"].index(attr)
        assert d2["X_cat"][i, j] == doms[attr].size - 1      # the 'other' code, inside the public domain


def test_mixed_data_refuses_values_outside_the_public_domain():
    from lib.experiments.tasks import mixed_naive_bayes as mixed
    f = pd.DataFrame({"status": [1, 7], "duration": [6.0, 12.0], "credit_risk": [0, 1]})
    with pytest.raises(ValueError, match="outside its public domain"):
        mixed.mixed_data("GermanCredit", frame=f)
    f = pd.DataFrame({"status": [1, 2], "duration": [6.0, 12.0], "credit_risk": [0, 2]})
    with pytest.raises(ValueError, match="label"):
        mixed.mixed_data("GermanCredit", frame=f)
