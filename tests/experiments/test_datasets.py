"""lib.experiments.datasets: one entry per dataset, read by data, schema, public_bounds and preprocessing.

The entries are checked against the loaded files (every column is the label, a categorical
attribute, a numerical attribute with a public range, or excluded, exactly one of them), the
record refuses inconsistent entries, and a toy dataset added as one entry goes through loading,
the schema, the public ranges and both preprocessings.
"""

import dataclasses
import hashlib

import numpy as np
import pandas as pd
import pytest

from lib.experiments import data, datasets, preprocessing, public_bounds, schema
from lib.experiments.datasets import DATASETS, REGISTRY, Bound, DataFile, Dataset, Domain


@pytest.mark.needs_data
@pytest.mark.parametrize("name", DATASETS)
def test_every_column_is_exactly_one_part_of_the_entry(name):
    entry = REGISTRY[name]
    frame = data.load(name)
    columns = list(frame.columns)
    assert columns[-1] == entry.label
    parts = [set(entry.domains), set(entry.bounds), set(entry.excluded), {entry.label}]
    assert sum(map(len, parts)) == len(columns)  # disjoint (the record checks it) and covering
    assert set().union(*parts) == set(columns)
    categorical = {c for c in columns if isinstance(frame[c].dtype, pd.CategoricalDtype)}
    assert categorical == set(entry.domains)
    # every value of the file is in its public domain or range (or goes to 'other')
    assert schema.check(name, frame, entry.label).query("not other").empty
    assert public_bounds.check(name, frame).empty


@pytest.mark.needs_data
@pytest.mark.parametrize("name", DATASETS)
def test_the_paper_row_matches_the_file(name):
    entry = REGISTRY[name]
    frame = data.load(name)
    instances, attributes, classes, _ = entry.table1
    assert len(frame) == instances
    assert frame.shape[1] - 1 - len(entry.excluded) == attributes
    assert entry.classes.size == classes


def test_the_modules_read_the_entries():
    for name, entry in REGISTRY.items():
        assert data.files(name) == entry.files
        assert data.label_column(name) == entry.label
        assert data.positive_class(name) == entry.positive
        assert data.source(name) == entry.source
        assert schema.domains(name) == dict(entry.domains) == schema.DOMAINS[name]
        assert schema.classes(name) == entry.classes == schema.CLASSES[name]
        assert public_bounds.BOUNDS[name] == dict(entry.bounds)
        assert list(public_bounds.table(name).index) == list(entry.bounds)
        assert preprocessing.SCALES[name] == dict(entry.scales)
        assert preprocessing.EXCLUDED.get(name, ()) == entry.excluded
        assert preprocessing.PAPER_TABLE1[name] == entry.table1
    assert DATASETS == data.DATASETS == tuple(REGISTRY) == (
        "CreditCard", "Thyroid", "Shopper", "Digit", "GermanCredit", "Bank", "Spam", "Adult")
    with pytest.raises(TypeError):
        REGISTRY["Adult"].domains["age"] = None  # the entries are read-only


def test_an_unknown_name_lists_the_datasets():
    with pytest.raises(ValueError, match="name must be one of CreditCard, Thyroid, .*; got 'Iris'"):
        datasets.get("Iris")
    for call in (lambda: schema.domains("Iris"), lambda: public_bounds.table("Iris"),
                 lambda: public_bounds.check("Iris", pd.DataFrame())):
        with pytest.raises(ValueError, match="dataset must be one of CreditCard"):
            call()


# ------------------------------------------------------------ the record refuses bad entries

_GOOD = dict(
    name="Toy", source="made up for the tests",
    files=(DataFile("toy/toy.csv", "0" * 64, None),), parse=lambda parts: None,
    label="y", positive="b",
    classes=Domain(("a", "b"), False, "doc", "test"),
    domains={"colour": Domain(("red", "blue"), True, "doc", "test")},
    bounds={"size": Bound(0, 10, "definition", "test"), "debt": Bound(-5, 5, "assumed", "test")},
    scales={"size": "log", "debt": "symlog"},
)


def test_a_good_entry_is_accepted():
    entry = Dataset(**_GOOD)
    assert entry.categorical == ("colour",)
    assert entry.scale("size") == "log" and entry.scale("other") == "linear"
    assert entry.table1 is None and entry.excluded == ()


@pytest.mark.parametrize("change, match", [
    ({"name": ""}, "name must be a non-empty string"),
    ({"files": ()}, "files must be a non-empty tuple of DataFile"),
    ({"excluded": ("colour",)}, "domains and excluded must not share columns"),
    ({"label": "size"}, "label and bounds must not share columns"),
    ({"domains": {"size": Domain((1, 2), False, "doc", "t")}}, "domains and bounds must not share"),
    ({"scales": {"weight": "log"}}, "scales names 'weight', which has no public range"),
    ({"scales": {"size": "sqrt"}}, "the scale of size must be one of linear, log, symlog"),
    ({"scales": {"size": "symlog"}}, "'symlog' scale of size needs a range symmetric about 0"),
    ({"bounds": {"size": Bound(3, 3, "doc", "t")}, "scales": {}}, "finite with lower < upper"),
    ({"bounds": {"size": Bound(0, np.inf, "doc", "t")}, "scales": {}}, "finite with lower < upper"),
    ({"bounds": {"size": Bound(0, 1, "guessed", "t")}, "scales": {}}, "must be a Bound of kind"),
    ({"domains": {"colour": Domain(("red", "red"), False, "doc", "t")}}, "lists a value twice"),
    ({"classes": Domain(("a", "b"), False, "definition", "t")}, "must be a Domain of kind doc or assumed"),
])
def test_an_inconsistent_entry_is_refused(change, match):
    with pytest.raises(ValueError, match=match):
        Dataset(**{**_GOOD, **change})


# ------------------------------------------------------------ a new dataset is one entry

_TOY_ROWS = 40


def _toy_csv() -> bytes:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({
        "colour": rng.choice(["red", "blue", "green"], _TOY_ROWS),   # green: not listed, the 'other' code
        "size": rng.uniform(0, 10, _TOY_ROWS).round(3),
        "debt": rng.uniform(-5, 5, _TOY_ROWS).round(3),
        "row_id": np.arange(_TOY_ROWS),
        "y": rng.choice(["a", "b"], _TOY_ROWS),
    })
    return frame.to_csv(index=False).encode()


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """A toy dataset registered as one entry, its file in a private data folder."""
    content = _toy_csv()
    (tmp_path / "toy").mkdir()
    (tmp_path / "toy" / "toy.csv").write_bytes(content)
    monkeypatch.setenv(data.DATA_ENV, str(tmp_path))
    entry = dataclasses.replace(
        Dataset(**_GOOD), files=(DataFile("toy/toy.csv", hashlib.sha256(content).hexdigest(), None),),
        parse=lambda parts: datasets._csv(parts[0]), excluded=("row_id",))
    monkeypatch.setitem(REGISTRY, "Toy", entry)
    yield entry
    data._load_cached.cache_clear()
    preprocessing._prepared.cache_clear()
    preprocessing._public_encoded.cache_clear()


def test_a_dataset_added_as_one_entry_runs_through_every_module(toy):
    frame = data.load("Toy")
    assert list(frame.columns) == ["colour", "size", "debt", "row_id", "y"]
    assert isinstance(frame["colour"].dtype, pd.CategoricalDtype)
    assert data.label_column("Toy") == "y"
    assert list(schema.table("Toy").index) == ["colour", "(label)"]
    np.testing.assert_array_equal(public_bounds.bounds_for("Toy", ["size", "debt"]), [[0, 10], [-5, 5]])

    public = preprocessing.prepare("Toy", n_bins=4)
    assert public.attributes == ("colour", "size", "debt")          # row_id excluded
    np.testing.assert_array_equal(public.n_values, [3, 4, 4])     # red, blue, other; 4 public bins each
    assert public.classes == ("a", "b")
    info = preprocessing.encoding("Toy", n_bins=4)
    assert list(info["kind"]) == ["categorical", "binned (log)", "binned (symlog)"]
    np.testing.assert_array_equal(info.loc["size", "edges"], preprocessing.public_edges(0, 10, 4, "log"))

    train, test = preprocessing.split_rows(_TOY_ROWS, preprocessing.SEED)
    colours = np.array(["red", "blue", "other"])
    raw = frame["colour"].astype(str).where(frame["colour"].isin(["red", "blue"]), "other").to_numpy()
    np.testing.assert_array_equal(colours[public.X_test[:, 0]], raw[test])
    np.testing.assert_array_equal(colours[public.X_train[:, 0]], raw[train])

    quantile = preprocessing.prepare("Toy", binning="quantile")
    assert quantile.attributes == ("colour", "size", "debt")
