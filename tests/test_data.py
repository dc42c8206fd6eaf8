"""lib.experiments.data: the eight datasets of Table 1, checksums, file lookup, download.

Tests that read the real files carry ``@pytest.mark.needs_data`` (the rule is
in ``conftest.py``: ``DIRICHLET_DATA_DIR`` set, or a filled cache). The download tests need no
data: they serve small files they make from a server on 127.0.0.1.
"""

import gzip
import hashlib
import io
import os
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lib.experiments import data
from lib.experiments.data import (DATA_ENV, DATASETS, DataFile, DataFileError,
                                  download, fetch, files, label_column, load)

from ._http import Route, serve


# Shapes (rows, columns incl. the label) and class counts from MANIFEST.md
# (shared/data/uci), which were counted independently of this package.
MANIFEST = {
    "CreditCard": ((30000, 24), {0: 23364, 1: 6636}),
    "Thyroid": ((7200, 22), {1: 166, 2: 368, 3: 6666}),
    "Shopper": ((12330, 18), {False: 10422, True: 1908}),
    "Digit": ((5620, 65), None),
    "GermanCredit": ((1000, 21), {1: 700, 0: 300}),
    "Bank": ((41188, 21), {"no": 36548, "yes": 4640}),
    "Spam": ((4601, 58), {0: 2788, 1: 1813}),
    "Adult": ((48842, 15), {"<=50K": 37155, ">50K": 11687}),
}


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """An empty data folder and an empty cache; downloads are forbidden."""
    folder, cache = tmp_path / "data", tmp_path / "cache"
    folder.mkdir()
    monkeypatch.setenv(DATA_ENV, str(folder))
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))

    def no_download(file, *args, **kwargs):
        raise AssertionError(f"test tried to download {file.url}")

    monkeypatch.setattr(data, "download", no_download)
    return folder


# ------------------------------------------------------------ real datasets

@pytest.mark.needs_data
@pytest.mark.parametrize("name", DATASETS)
def test_shapes_and_class_counts_match_the_manifest(name):
    frame = load(name)
    shape, counts = MANIFEST[name]
    assert frame.shape == shape
    label = label_column(name)
    assert frame.columns[-1] == label
    y = frame[label]
    if counts is None:  # Digit: ten classes of 554..572 rows
        vc = y.value_counts()
        assert sorted(vc.index) == list(range(10))
        assert vc.min() == 554 and vc.max() == 572
    else:
        assert y.value_counts().to_dict() == counts


@pytest.mark.needs_data
def test_real_column_names():
    assert list(load("Adult").columns[:3]) == ["age", "workclass", "fnlwgt"]
    spam = load("Spam").columns
    assert spam[0] == "word_freq_make" and spam[56] == \
        "capital_run_length_total"
    assert load("CreditCard").columns[0] == "LIMIT_BAL"
    assert "credit_risk" in load("GermanCredit").columns
    assert load("Bank").columns[0] == "age"
    assert load("Thyroid").columns[16] == "TSH"
    for name in DATASETS:
        cols = load(name).columns
        assert cols.is_unique and not any(str(c).startswith("Unnamed")
                                          for c in cols)


@pytest.mark.needs_data
def test_adult_test_labels_lose_their_dot_and_missing_is_nan():
    adult = load("Adult")
    assert set(adult["income"]) == {"<=50K", ">50K"}
    # MANIFEST: 3620 of the 48842 rows have at least one '?'.
    assert int(adult.isna().any(axis=1).sum()) == 3620
    assert adult["workclass"].dtype == "category"
    assert "?" not in adult["workclass"].cat.categories


@pytest.mark.needs_data
def test_categorical_attributes_have_the_category_dtype():
    german = load("GermanCredit")
    assert german["status"].dtype == "category"
    assert pd.api.types.is_integer_dtype(german["amount"])
    assert load("Bank")["job"].dtype == "category"


@pytest.mark.needs_data
def test_load_returns_a_fresh_copy():
    a = load("GermanCredit")
    a.iloc[0, 1] = -5
    assert load("GermanCredit").iloc[0, 1] != -5


@pytest.mark.needs_data
def test_agrees_with_the_authors_csv_where_it_exists():
    """The author's recovered CSVs hold the same values (notes, Section 1)."""
    folder = Path(os.environ.get(DATA_ENV, "")).parent / "author_repo_csv"
    if not folder.is_dir():
        pytest.skip("author_repo_csv is not next to the data folder")
    for name in ("Spam", "Digit", "Thyroid", "GermanCredit"):
        theirs = pd.read_csv(folder / f"{name}.csv")
        ours = load(name)
        assert theirs.shape == ours.shape
        np.testing.assert_array_equal(
            theirs.to_numpy(dtype=float),
            ours.apply(lambda c: c.astype(float)).to_numpy())


def test_unknown_name_lists_the_datasets():
    with pytest.raises(ValueError, match="name must be one of CreditCard"):
        load("Iris")
    with pytest.raises(ValueError, match="Adult"):
        label_column("adult")


# ------------------------------------------------------ missing / corrupted

def _copy_real(file: DataFile, dest: Path, *, gz: bool = False) -> Path:
    """Copy the verified content of ``file`` (from the data folder or the cache) into ``dest``."""
    where = [Path(os.environ[DATA_ENV])] if os.environ.get(DATA_ENV) else []
    found = [p for folder in where + [data.cache_dir()]
             for p in data._candidates(folder, file)]
    content = data._read_verified(found[0], file)
    target = dest / (file.path + (".gz" if gz else ""))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(gzip.compress(content) if gz else content)
    return target


@pytest.fixture
def german_copy(tmp_path):
    """A private data folder holding a good copy of the German credit file (tests: needs_data)."""
    (file,) = files("GermanCredit")
    folder = tmp_path / "copy"
    return file, _copy_real(file, folder), folder


def _use_folder(monkeypatch, folder, tmp_path):
    monkeypatch.setenv(DATA_ENV, str(folder))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(data, "download", _forbidden_download)


def _forbidden_download(file, *args, **kwargs):
    raise AssertionError(f"test tried to download {file.url}")


@pytest.mark.needs_data
def test_a_good_copy_loads_plain_and_gzipped(german_copy, monkeypatch,
                                             tmp_path):
    file, path, folder = german_copy
    _use_folder(monkeypatch, folder, tmp_path)
    assert load("GermanCredit").shape == (1000, 21)
    gz = folder / "gz"
    _copy_real(file, gz, gz=True)
    monkeypatch.setenv(DATA_ENV, str(gz))
    assert load("GermanCredit").shape == (1000, 21)


@pytest.mark.needs_data
def test_flipped_byte_raises_and_nothing_is_parsed(german_copy, monkeypatch,
                                                   tmp_path):
    file, path, folder = german_copy
    _use_folder(monkeypatch, folder, tmp_path)
    raw = bytearray(path.read_bytes())
    raw[500] ^= 0x01
    path.write_bytes(bytes(raw))
    parsed = []
    monkeypatch.setattr(data, "_csv", lambda *a, **k: parsed.append(1))
    with pytest.raises(DataFileError) as err:
        load("GermanCredit")
    message = str(err.value)
    assert "corrupted" in message and str(path) in message
    assert file.sha256 in message and DATA_ENV in message
    assert file.url in message
    assert parsed == []


@pytest.mark.needs_data
def test_corrupted_gzip_raises(german_copy, monkeypatch, tmp_path):
    file, path, folder = german_copy
    path.unlink()
    gz = Path(str(path) + ".gz")
    gz.write_bytes(gzip.compress(b"not the data"))
    _use_folder(monkeypatch, folder, tmp_path)
    with pytest.raises(DataFileError, match=file.sha256):
        load("GermanCredit")
    gz.write_bytes(b"\x1f\x8b garbage")
    with pytest.raises(DataFileError, match="not a valid gzip"):
        load("GermanCredit")


def test_missing_file_message_names_file_checksum_and_remedy(isolated):
    (file,) = files("Spam")
    with pytest.raises(DataFileError) as err:
        fetch(file, download_missing=False)
    message = str(err.value)
    assert "not found" in message and file.path in message
    assert file.sha256 in message and DATA_ENV in message
    assert file.url in message


def test_credit_card_cannot_be_downloaded_and_says_why(isolated):
    (file,) = files("CreditCard")
    assert file.url is None
    with pytest.raises(DataFileError) as err:
        load("CreditCard")
    message = str(err.value)
    assert "xlrd" in message and file.sha256 in message
    assert "ID,X1,...,X23,Y" in message


# ------------------------------------------------------------ downloads

PAYLOAD = b"a small file the test makes\n" * 100
SHA = hashlib.sha256(PAYLOAD).hexdigest()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """No data folder, an empty cache."""
    monkeypatch.delenv(DATA_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / data.CACHE_NAME


def _leftovers(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()] \
        if folder.exists() else []


def test_download_success_lands_verified_in_the_cache(cache):
    with serve({"/small.txt": Route(PAYLOAD)}) as (base, hits):
        file = DataFile("test/small.txt", SHA, base + "/small.txt")
        assert fetch(file) == PAYLOAD
        assert (cache / "test" / "small.txt").read_bytes() == PAYLOAD
        assert fetch(file) == PAYLOAD  # second time from the cache
        assert hits == {"/small.txt": 1}
    assert _leftovers(cache) == [cache / "test" / "small.txt"]


def test_download_extracts_a_zip_member(cache):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("readme.txt", b"other")
        z.writestr("inner/small.txt", PAYLOAD)
    with serve({"/a.zip": Route(buf.getvalue())}) as (base, _):
        file = DataFile("test/small.txt", SHA, base + "/a.zip",
                        member="inner/small.txt")
        assert fetch(file) == PAYLOAD
        wrong = DataFile("test/other.txt", SHA, base + "/a.zip",
                         member="missing.txt")
        with pytest.raises(DataFileError, match="missing.txt"):
            fetch(wrong)
    assert _leftovers(cache) == [cache / "test" / "small.txt"]


def test_download_404_is_an_error_naming_the_url(cache):
    with serve({}) as (base, _):
        file = DataFile("test/small.txt", SHA, base + "/nothing.txt")
        with pytest.raises(DataFileError) as err:
            fetch(file)
    message = str(err.value)
    assert "404" in message and file.url in message and SHA in message
    assert _leftovers(cache) == []


def test_truncated_download_fails_its_checksum_and_leaves_nothing(cache):
    with serve({"/small.txt": Route(PAYLOAD[:-10])}) as (base, _):
        file = DataFile("test/small.txt", SHA, base + "/small.txt")
        with pytest.raises(DataFileError, match="corrupted or truncated"):
            fetch(file)
    assert _leftovers(cache) == []


def test_transfer_cut_short_leaves_nothing(cache):
    route = Route(PAYLOAD[:100], content_length=len(PAYLOAD))
    with serve({"/small.txt": route}) as (base, _):
        file = DataFile("test/small.txt", SHA, base + "/small.txt")
        with pytest.raises(DataFileError, match="small.txt"):
            fetch(file)
    assert _leftovers(cache) == []


def test_download_timeout(cache, monkeypatch):
    monkeypatch.setattr(data, "DOWNLOAD_TIMEOUT", 0.2)
    with serve({"/slow.txt": Route(PAYLOAD, delay=1.0)}) as (base, _):
        file = DataFile("test/small.txt", SHA, base + "/slow.txt")
        with pytest.raises(DataFileError, match="timed out"):
            fetch(file)
    assert _leftovers(cache) == []


def test_download_into_an_explicit_folder(tmp_path):
    with serve({"/small.txt": Route(PAYLOAD)}) as (base, _):
        file = DataFile("x/small.txt", SHA, base + "/small.txt")
        path = download(file, tmp_path, timeout=5)
    assert path == tmp_path / "x" / "small.txt"
    assert path.read_bytes() == PAYLOAD


def test_a_corrupted_cache_copy_is_an_error_not_a_fallback(cache):
    (cache / "test").mkdir(parents=True)
    (cache / "test" / "small.txt").write_bytes(b"bad")
    with serve({"/small.txt": Route(PAYLOAD)}) as (base, hits):
        file = DataFile("test/small.txt", SHA, base + "/small.txt")
        with pytest.raises(DataFileError, match="corrupted"):
            fetch(file)
        assert hits == {}
