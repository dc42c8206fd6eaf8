"""lib.experiments.data: the eight datasets of Table 1, checksums, file lookup, download.

Tests that read the real files carry ``@pytest.mark.needs_data`` (the rule is
in ``conftest.py``: ``DIRICHLET_DATA_DIR`` set, or a filled cache). The download tests need no
data: they serve small files they make from a server on 127.0.0.1. The credit-card tests write
a small ``.xls`` with a real Excel writer (xlwt) in UCI's layout; the end-to-end test serves all
eight datasets from 127.0.0.1 laid out as UCI serves them (built from the data folder) and loads
them with no data folder and an empty cache.
"""

import dataclasses
import gzip
import hashlib
import io
import os
import subprocess
import sys
import textwrap
import threading
import time
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import pandas as pd
import pytest

from lib.experiments import data, datasets
from lib.experiments.data import (DATA_ENV, DATASETS, DataFile, DataFileError,
                                  download, fetch, files, label_column, load)

from tests._http import Route, serve


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
    monkeypatch.setattr(datasets, "_csv", lambda *a, **k: parsed.append(1))
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


# ------------------------------------------------------------ downloads

PAYLOAD = b"a small file the test makes\n" * 100
SHA = hashlib.sha256(PAYLOAD).hexdigest()


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


# ------------------------------------------------------- the mirror variable

def test_source_url_follows_the_mirror(monkeypatch):
    (file,) = files("Spam")
    monkeypatch.delenv(data.MIRROR_ENV, raising=False)
    assert data.source_url(file) == file.url
    assert file.url.startswith(data.UCI_HOST)
    monkeypatch.setenv(data.MIRROR_ENV, "http://127.0.0.1:1234/")
    assert data.source_url(file) == "http://127.0.0.1:1234" + file.url[len(data.UCI_HOST):]
    other = DataFile("x/y.txt", SHA, "http://elsewhere.example/y.txt")
    assert data.source_url(other) == other.url  # only UCI's address is mirrored


# ------------------------------------------- credit card: UCI's .xls, or its CSV copy

CREDIT_ROWS = [  # ID, X1..X23, Y: whole numbers as in UCI's sheet (negative codes included)
    [1, 20000, 2, 2, 1, 24, 2, 2, -1, -1, -2, -2, 3913, 3102, 689, 0, 0, 0, 0, 689, 0, 0, 0, 0, 1],
    [2, 120000, 2, 2, 2, 26, -1, 2, 0, 0, 0, 2, 2682, 1725, 2682, 3272, 3455, 3261, 0, 1000, 1000,
     1000, 0, 2000, 1],
    [3, 90000, 2, 2, 2, 34, 0, 0, 0, 0, 0, 0, 29239, 14027, 13559, 14331, 14948, 15549, 1518, 1500,
     1000, 1000, 1000, 5000, 0],
    [4, 50000, 1, 3, 1, 57, -1, 0, -1, 0, 0, 0, 8617, 5670, 35835, 20940, 19146, 19131, 2000, 36681,
     10000, 9000, 689, 679, 0],
]
CREDIT_NAMES = ["ID", "LIMIT_BAL", "SEX", "EDUCATION", "MARRIAGE", "AGE", "PAY_0", "PAY_2", "PAY_3",
                "PAY_4", "PAY_5", "PAY_6"] + [f"BILL_AMT{i}" for i in range(1, 7)] \
    + [f"PAY_AMT{i}" for i in range(1, 7)] + ["default payment next month"]
CREDIT_X = [""] + [f"X{i}" for i in range(1, 24)] + ["Y"]


def _canonical_by_hand(rows) -> bytes:
    """The canonical text written out independently of the module (one f-string per line)."""
    lines = ["ID," + ",".join(f"X{i}" for i in range(1, 24)) + ",Y"]
    lines += [",".join(str(int(v)) for v in row) for row in rows]
    return ("\n".join(lines) + "\n").encode()


def _xls(rows, *, names=CREDIT_NAMES) -> bytes:
    """UCI's sheet layout (two header rows, then the clients) written by xlwt, a real .xls writer."""
    import xlwt

    book = xlwt.Workbook()
    sheet = book.add_sheet("Data")
    for j, head in enumerate(CREDIT_X):
        sheet.write(0, j, head)
    for j, head in enumerate(names):
        sheet.write(1, j, head)
    for i, row in enumerate(rows):
        cells = sheet.row(i + 2)
        for j, value in enumerate(row):
            if isinstance(value, str):
                cells.write(j, value)  # a text cell
            else:
                cells.set_cell_number(j, value)  # a number cell, as UCI's
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def _zip(members: dict) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, body in members.items():
            archive.writestr(name, body)
    return buf.getvalue()


def _uci_credit(rows):
    """The registry's credit-card file with the checksum of ``rows``, and its route on UCI."""
    (real,) = files("CreditCard")
    fixture = dataclasses.replace(real, sha256=hashlib.sha256(_canonical_by_hand(rows)).hexdigest())
    return fixture, urlsplit(real.url).path


def test_the_xls_is_read_and_its_table_verified_on_loopback(cache, monkeypatch):
    file, route = _uci_credit(CREDIT_ROWS)
    xls = _xls(CREDIT_ROWS)
    assert xls[:8] == bytes.fromhex("d0cf11e0a1b11ae1")  # an OLE2 compound file, as .xls is
    archive = _zip({file.member: xls})
    with serve({route: Route(archive)}) as (base, hits):
        monkeypatch.setenv(data.MIRROR_ENV, base)
        assert fetch(file) == _canonical_by_hand(CREDIT_ROWS)
        assert fetch(file) == _canonical_by_hand(CREDIT_ROWS)  # the second time from the cache
        assert hits == {route: 1}
    # the cache keeps what UCI serves: the .xls itself, byte for byte
    assert _leftovers(cache) == [cache / file.path]
    assert (cache / file.path).read_bytes() == xls


def test_the_csv_copy_passes_the_same_check(tmp_path, monkeypatch):
    file, _ = _uci_credit(CREDIT_ROWS)
    folder = tmp_path / "data"
    (folder / "default_credit_card").mkdir(parents=True)
    # the shared copy's form: CRLF, and whole numbers written as floats in some columns
    text = "ID," + ",".join(f"X{i}" for i in range(1, 24)) + ",Y\r\n" + "".join(
        ",".join(f"{v}.0" if j in (1, 12) else str(v) for j, v in enumerate(row)) + "\r\n"
        for row in CREDIT_ROWS)
    (folder / "default_credit_card" / "UCI_Credit_Card.csv.gz").write_bytes(gzip.compress(text.encode()))
    monkeypatch.setenv(DATA_ENV, str(folder))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(data, "download", _forbidden_download)
    assert fetch(file) == _canonical_by_hand(CREDIT_ROWS)
    # the .xls in the data folder is found first and gives the same table
    (folder / file.path).write_bytes(_xls(CREDIT_ROWS))
    assert data._candidates(folder, file)[0] == folder / file.path
    assert fetch(file) == _canonical_by_hand(CREDIT_ROWS)


def test_a_changed_value_fails_the_table_checksum_and_nothing_is_kept(cache, monkeypatch):
    file, route = _uci_credit(CREDIT_ROWS)
    changed = [row[:] for row in CREDIT_ROWS]
    changed[2][13] += 1  # one bill amount off by one NT dollar
    with serve({route: Route(_zip({file.member: _xls(changed)}))}) as (base, _):
        monkeypatch.setenv(data.MIRROR_ENV, base)
        with pytest.raises(DataFileError) as err:
            fetch(file)
    message = str(err.value)
    assert "decoded table has sha256" in message and file.sha256 in message
    assert "corrupted or truncated" in message
    assert _leftovers(cache) == []


@pytest.mark.parametrize("problem", ["names", "fraction", "text", "extra-column", "not-excel"])
def test_a_sheet_that_is_not_uci_layout_is_refused(cache, monkeypatch, problem):
    file, route = _uci_credit(CREDIT_ROWS)
    rows = [row[:] for row in CREDIT_ROWS]
    if problem == "names":
        body = _xls(rows, names=["ID"] + [f"X{i}" for i in range(1, 24)] + ["Y"])
        expected = "header rows"
    elif problem == "fraction":
        rows[1][12] = 2682.5
        body, expected = _xls(rows), "data row 2, column X12 holds 2682.5, not a whole number"
    elif problem == "text":
        rows[0][0] = "one"
        body, expected = _xls(rows), "not a table of numbers"
    elif problem == "extra-column":
        rows[3].append(7)
        body, expected = _xls(rows), "found values beyond them"
    else:
        body, expected = b"ID,X1\n1,2\n", "not a readable Excel workbook"
    with serve({route: Route(_zip({file.member: body}))}) as (base, _):
        monkeypatch.setenv(data.MIRROR_ENV, base)
        with pytest.raises(DataFileError, match=expected) as err:
            fetch(file)
    assert "cannot be read as the table" in str(err.value) and "nothing was kept" in str(err.value)
    assert _leftovers(cache) == []


def test_credit_card_missing_everywhere_says_every_place_looked(cache, monkeypatch):
    (file,) = files("CreditCard")
    with serve({}) as (base, _):
        monkeypatch.setenv(data.MIRROR_ENV, base)
        with pytest.raises(DataFileError) as err:
            load("CreditCard")
    message = str(err.value)
    assert f"{DATA_ENV} is not set" in message
    assert f"the cache folder {cache} does not exist" in message
    assert "404" in message and data.source_url(file) in message
    assert "UCI_Credit_Card.csv" in message and file.path in message and file.sha256 in message


def test_the_cli_without_data_prints_the_places_and_no_traceback(tmp_path):
    with serve({}) as (base, _):
        env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "xdg"), **{data.MIRROR_ENV: base})
        env.pop(DATA_ENV, None)
        proc = subprocess.run(
            [sys.executable, "-m", "lib.experiments", "run", "--model", "naive-bayes", "--datasets",
             "creditcard", "--n-epsilons", "1", "--n-repeats", "1", "--no-progress", "--out",
             str(tmp_path / "out")],
            env=env, capture_output=True, text=True, timeout=120,
            cwd=Path(__file__).resolve().parents[2])
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    assert f"{DATA_ENV} is not set" in proc.stderr and "404" in proc.stderr


@pytest.mark.needs_data
def test_the_recorded_credit_checksum_is_that_of_the_shared_csv():
    """The registry's sha256 equals one computed here by plain string handling of the CSV copy."""
    (file,) = files("CreditCard")
    folder = Path(os.environ.get(DATA_ENV) or data.cache_dir())
    path = folder / "default_credit_card" / "UCI_Credit_Card.csv.gz"
    if not path.is_file():
        pytest.skip("the CSV copy is not in the data folder")
    lines = gzip.decompress(path.read_bytes()).decode().splitlines()
    assert lines[0] == ",".join(datasets.CREDIT_HEADER)
    rows = [[float(v) for v in line.split(",")] for line in lines[1:]]
    assert len(rows) == 30000 and all(v == int(v) for row in rows for v in row)
    assert hashlib.sha256(_canonical_by_hand(rows)).hexdigest() == file.sha256


# ------------------------------------ end to end: all eight datasets from a loopback UCI

def _uci_layout(source: Path) -> dict:
    """Routes of a server laid out like UCI, holding the data folder ``source``'s files as UCI serves them.

    Plain files are served plain; zip members inside a zip at the registry's URL (the data folder's
    own copy of UCI's archive when it has one, e.g. bank-additional.zip); the credit-card table as
    an .xls written by xlwt inside UCI's zip.
    """
    zips: dict[str, dict] = {}
    routes = {}
    for name in DATASETS:
        for file in files(name):
            content = data._read_verified(data._candidates(source, file)[0], file)
            route = urlsplit(file.url).path
            if file.decode is not None:
                table = [[int(v) for v in line.split(b",")] for line in content.splitlines()[1:]]
                content = _xls(table)
            if file.member is None:
                routes[route] = Route(content)
                continue
            own = source / Path(file.path).parent / Path(route).name
            if own.is_file():
                routes[route] = Route(own.read_bytes())
            else:
                zips.setdefault(route, {})[file.member] = content
    routes.update({route: Route(_zip(members)) for route, members in zips.items()})
    return routes


@pytest.mark.needs_data
def test_every_dataset_is_fetched_and_verified_from_a_loopback_uci(tmp_path, monkeypatch):
    # the server's files come from the data folder, or from a filled cache (needs_data: one of them)
    routes = _uci_layout(Path(os.environ.get(DATA_ENV) or data.cache_dir()))
    assert len(routes) == 11  # 13 files: Adult 2, Digit 2, Thyroid 2, one each else; all URLs distinct
    monkeypatch.delenv(DATA_ENV, raising=False)
    xdg = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CACHE_HOME", str(xdg))
    try:
        with serve(routes) as (base, hits):
            monkeypatch.setenv(data.MIRROR_ENV, base)
            for name in DATASETS:
                frame = load(name)
                shape, counts = MANIFEST[name]
                assert frame.shape == shape, name
                if counts is not None:
                    assert frame[label_column(name)].value_counts().to_dict() == counts, name
            assert sorted(hits.values()) == [1] * len(routes)  # each archive fetched once
        cache = xdg / data.CACHE_NAME
        # every file where the loader looks, and the next process finds them all in the cache
        for name in DATASETS:
            for file in files(name):
                assert data._candidates(cache, file) == [cache / file.path]
        assert not list((cache / data.PARTIAL_DIR).glob("*"))
        monkeypatch.setattr(data, "download", _forbidden_download)
        data._load_cached.cache_clear()
        assert load("CreditCard").shape == MANIFEST["CreditCard"][0]
    finally:
        data._load_cached.cache_clear()  # frames keyed by this test's cache folder


def test_the_fetch_command_reports_every_missing_file_without_a_traceback(cache, monkeypatch, capsys):
    with serve({}) as (base, _):
        monkeypatch.setenv(data.MIRROR_ENV, base)
        assert data.main(["Spam", "Adult"]) == 1
    err = capsys.readouterr().err
    assert "3 data file(s) could not be obtained" in err  # spambase.data, adult.data, adult.test
    assert err.count(f"{DATA_ENV} is not set") == 3 and "404" in err


def test_the_fetch_command_verifies_a_filled_folder(tmp_path, monkeypatch, capsys):
    (file,) = files("Spam")
    folder = tmp_path / "data"
    (folder / "spambase").mkdir(parents=True)
    (folder / "spambase" / "spambase.data").write_bytes(b"not spambase\n")
    _use_folder(monkeypatch, folder, tmp_path)
    assert data.main(["Spam"]) == 1
    err = capsys.readouterr().err
    assert "corrupted" in err and file.sha256 in err
    assert data.main(["Iris"]) == 1 and "name must be one of" in capsys.readouterr().err
    good = folder / "good"
    (good / "test").mkdir(parents=True)
    (good / "test" / "small.txt").write_bytes(PAYLOAD)
    monkeypatch.setenv(DATA_ENV, str(good))
    monkeypatch.setattr(data, "files", lambda name: (DataFile("test/small.txt", SHA, None),))
    assert data.main(["Spam"]) == 0 and "verified Spam" in capsys.readouterr().out


# Lookup and download failures: where the loader looked, timeouts, and no partial file where it looks.

def test_fetch_says_where_it_looked_and_why_each_place_failed(tmp_path, monkeypatch):
    missing = tmp_path / "no-such-folder"
    monkeypatch.setenv(DATA_ENV, str(missing))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    with serve({}) as (base, _):
        file = DataFile("test/small.txt", "0" * 64, base + "/nothing.txt")
        with pytest.raises(DataFileError) as err:
            fetch(file)
    message = str(err.value)
    # before the fix: only "downloading ... failed: HTTP 404"
    assert f"{DATA_ENV} folder {missing} does not exist" in message
    assert "the cache folder" in message and "does not exist" in message
    assert "404" in message and file.url in message


def test_fetch_without_download_names_each_folder(tmp_path, monkeypatch):
    folder = tmp_path / "data"
    folder.mkdir()
    monkeypatch.setenv(DATA_ENV, str(folder))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    file = DataFile("test/small.txt", "0" * 64, None)
    with pytest.raises(DataFileError) as err:
        fetch(file, download_missing=False)
    assert f"no {folder / file.path}[.gz]" in str(err.value)
    assert data.cache_dir() == tmp_path / "xdg" / data.CACHE_NAME


TRANSFER = b"hardening payload\n" * 200
TRANSFER_SHA = hashlib.sha256(TRANSFER).hexdigest()


def _files_where_the_loader_looks(cache: Path) -> list:
    """Every file of the cache outside the partial-download folder."""
    if not cache.exists():
        return []
    return [p for p in cache.rglob("*") if p.is_file() and data.PARTIAL_DIR not in p.parts]


def test_the_default_timeouts_are_short():
    assert data.DOWNLOAD_TIMEOUT <= 20  # was 60 s per file
    assert data.DOWNLOAD_DEADLINE <= 600


def test_a_stalled_server_times_out_with_a_clear_message(cache, monkeypatch):
    monkeypatch.setattr(data, "DOWNLOAD_TIMEOUT", 0.3)
    with serve({"/slow.txt": Route(TRANSFER, delay=2.0)}) as (base, _):
        start = time.monotonic()
        with pytest.raises(DataFileError, match=r"timed out.*DOWNLOAD_TIMEOUT") as err:
            fetch(DataFile("test/small.txt", TRANSFER_SHA, base + "/slow.txt"))
        assert time.monotonic() - start < 1.8
    assert TRANSFER_SHA in str(err.value) and "not found locally" in str(err.value)
    assert _files_where_the_loader_looks(cache) == []


class _Trickle(BaseHTTPRequestHandler):
    """Sends the payload a few bytes at a time: every wait is short, the transfer endless."""

    def do_GET(self):  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Length", str(len(TRANSFER)))
        self.end_headers()
        try:
            for i in range(0, len(TRANSFER), 8):
                self.wfile.write(TRANSFER[i:i + 8])
                self.wfile.flush()
                time.sleep(0.05)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *args):
        pass


@pytest.fixture
def trickle():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Trickle)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    host, port = server.server_address[:2]
    yield f"http://{host}:{port}/trickle.txt"
    server.shutdown()


def test_a_trickling_transfer_hits_the_deadline(cache, monkeypatch, trickle):
    monkeypatch.setattr(data, "DOWNLOAD_TIMEOUT", 1.0)
    monkeypatch.setattr(data, "DOWNLOAD_DEADLINE", 0.5)
    start = time.monotonic()
    with pytest.raises(DataFileError, match="DOWNLOAD_DEADLINE"):
        fetch(DataFile("test/small.txt", TRANSFER_SHA, trickle))
    assert time.monotonic() - start < 3  # the full trickle takes 22 s
    assert _files_where_the_loader_looks(cache) == []
    assert list((cache / data.PARTIAL_DIR).glob("*")) == []  # cleaned up on the way out


def test_a_killed_download_leaves_nothing_where_the_loader_looks(cache, trickle, tmp_path):
    script = textwrap.dedent(f"""
        import sys
        from lib.experiments.data import DataFile, fetch
        print("started", flush=True)
        fetch(DataFile("test/small.txt", {TRANSFER_SHA!r}, {trickle!r}))
    """)
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "xdg"))
    env.pop(DATA_ENV, None)
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE,
                            cwd=Path(__file__).resolve().parents[2])
    try:
        assert proc.stdout.readline().strip() == b"started"
        partial = cache / data.PARTIAL_DIR
        for _ in range(200):  # wait until the transfer is under way
            if partial.exists() and any(partial.glob("*.part")):
                break
            time.sleep(0.05)
        else:
            pytest.fail("the download did not start")
    finally:
        proc.kill()  # SIGKILL: no finally clause of the child runs
        proc.wait()
    assert _files_where_the_loader_looks(cache) == []  # the loader only looks outside .partial
    leftovers = list((cache / data.PARTIAL_DIR).glob("*.part"))
    assert leftovers  # the killed download's partial file, where nobody reads it
    # The next download removes stale leftovers (older than deadline + timeout).
    old = time.time() - data.DOWNLOAD_DEADLINE - data.DOWNLOAD_TIMEOUT - 10
    for p in leftovers:
        os.utime(p, (old, old))
    with serve({"/small.txt": Route(TRANSFER)}) as (base, _):
        assert fetch(DataFile("test/small.txt", TRANSFER_SHA, base + "/small.txt")) == TRANSFER
    assert list((cache / data.PARTIAL_DIR).glob("*")) == []
    assert _files_where_the_loader_looks(cache) == [cache / "test" / "small.txt"]
