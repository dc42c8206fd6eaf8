"""The eight UCI datasets of Table 1 (Section 5.1): files, checksums, loaders.

:func:`load` returns one dataset as a :class:`pandas.DataFrame` of its
attributes and its label, with the column names of the UCI documentation.
Attributes that the documentation describes as categorical (including
integer-coded ones, such as South German Credit's ``status``) have the pandas
``category`` dtype, whose categories are the values that occur in the whole
file; numeric attributes keep a numeric dtype. :mod:`lib.preprocessing` turns
this frame into the integer codes the models use.

**Where the files come from.**

Each file is looked up, in this order,

1. in the folder named by the environment variable ``DIRICHLET_DATA_DIR``
   (:data:`DATA_ENV`), laid out as ``<folder>/<dataset folder>/<file>``;
2. in the per-user cache ``$XDG_CACHE_HOME/dirichlet-mechanism`` (or
   ``~/.cache/dirichlet-mechanism``), with the same layout; this is where
   downloads land, so with :data:`DATA_ENV` unset the loader still works
   (from the cache, else from UCI);
3. at the UCI repository (or the mirror named by :data:`MIRROR_ENV`),
   downloaded into the cache.

A file may be stored plain or gzipped (``name`` or ``name.gz``). Its recorded
sha256 (:attr:`DataFile.sha256`) is that of the *plain* content, so one
checksum covers both forms and the copy that a download extracts. Every file is
read whole, decompressed if needed, and verified before a single byte is
parsed; the parser reads the verified bytes, never the file again. A missing
or corrupted file raises :class:`DataFileError` naming the file, the expected
checksum, every place looked in and how to obtain it.

**Tables verified by their values.** UCI serves Default of Credit Card
Clients only as an Excel ``.xls`` file inside a zip archive; the data folder
may hold that file or a CSV conversion of it (``UCI_Credit_Card.csv``, whose
bytes no writer reproduces). Such a file has a :attr:`DataFile.decode`
function that reads it (the ``.xls`` with the maintained reader
``python-calamine``, the CSV with pandas) into a *canonical* text of its
values: the header ``ID,X1,...,X23,Y`` and one line per client of integers
in decimal, LF line ends. The recorded sha256 is that of the canonical
text, so the same check accepts UCI's file and the CSV copy, and the parser
reads the canonical text.

**Downloads.**

A download goes to a temporary file in the folder :data:`PARTIAL_DIR` of the
cache (never in a dataset folder), with a timeout on every wait for the
server (:data:`DOWNLOAD_TIMEOUT` seconds) and on the whole transfer
(:data:`DOWNLOAD_DEADLINE`); the content (for a zip archive, the one member
that is needed; for a decoded table, its canonical values) is verified and
only then renamed into place, so a failed, corrupted or killed download leaves
nothing where the loader looks (a killed one leaves a ``.part`` file in
:data:`PARTIAL_DIR`, which the next download removes). What UCI serves:

- Adult, Spambase, Optdigits, the ann-thyroid files and Online Shoppers are
  plain files at ``archive.ics.uci.edu/ml/machine-learning-databases``.
- Bank Marketing and South German Credit are zip archives; the needed member
  is extracted with :mod:`zipfile`.
- Default of Credit Card Clients is ``default of credit card clients.xls``
  inside ``archive.ics.uci.edu/static/public/350/...zip``; the cache keeps
  the ``.xls`` as UCI serves it.

The standard library does the HTTP, caching and checksums (about 240 lines):
``pooch`` (1.9) was considered and not adopted: it downloads into a temporary
file beside the target (a killed download leaves it where the loader
looks), has a per-read timeout but no deadline for the whole transfer,
checks the hash of the archive rather than of the member or the decoded
table, and does not search a data folder for plain or gzipped copies; each
of these would need a custom downloader or processor around it.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import http.client
import io
import os
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

#: The datasets of Table 1, in the paper's order.
DATASETS: tuple[str, ...] = (
    "CreditCard", "Thyroid", "Shopper", "Digit",
    "GermanCredit", "Bank", "Spam", "Adult",
)

#: Environment variable naming the data folder.
DATA_ENV = "DIRICHLET_DATA_DIR"

#: Sub-folder of the user's cache folder that holds downloaded files.
CACHE_NAME = "dirichlet-mechanism"

#: Seconds a download may wait for the server (to connect, or for the next
#: bytes of a stalled transfer) before it fails.
DOWNLOAD_TIMEOUT = 15.0

#: Seconds a whole download of one file may take (a connection that trickles
#: a few bytes at a time never trips :data:`DOWNLOAD_TIMEOUT`).
DOWNLOAD_DEADLINE = 300.0

#: Sub-folder of the cache folder that holds downloads in progress. The loader
#: never looks there, so a download that is killed leaves nothing where the
#: loader looks; the next download removes such leftovers.
PARTIAL_DIR = ".partial"

#: The UCI repository's address; every download URL starts with it.
UCI_HOST = "https://archive.ics.uci.edu"

#: Where the UCI repository serves its original files (the legacy layout).
UCI_BASE = f"{UCI_HOST}/ml/machine-learning-databases"

#: Environment variable naming a mirror of the UCI repository: a base URL that
#: replaces :data:`UCI_HOST` in every download (the same file layout below it).
MIRROR_ENV = "DIRICHLET_UCI_MIRROR"


class DataFileError(OSError):
    """A data file is missing, corrupted or cannot be downloaded.

    The message names the file, its expected sha256 and how to obtain it.
    """


@dataclass(frozen=True)
class DataFile:
    """One file of a dataset.

    Attributes
    ----------
    path : str
        Path relative to the data folder, e.g. ``"adult/adult.data"``; the
        folder may hold it plain or as ``path + ".gz"``.
    sha256 : str
        SHA-256 of the plain (uncompressed) content.
    url : str or None
        Where UCI serves the file, or the zip archive that contains it;
        ``None`` when there is no download this package can read.
    member : str or None
        The member of the zip archive at ``url`` that is this file.
    how_to_obtain : str
        Extra advice for the error message.
    decode : callable or None
        ``decode(raw, name) -> bytes``: the canonical text of the table in
        ``raw`` (the bytes of a file called ``name``); ``None`` for files
        verified byte for byte. When set, :attr:`sha256` is that of the
        canonical text and :func:`fetch` returns it.
    aliases : tuple of str
        Other paths (relative to the data folder, plain or ``.gz``) that hold
        the same table in another format, e.g. a CSV conversion of an
        ``.xls``; only meaningful with ``decode``.
    """

    path: str
    sha256: str
    url: str | None
    member: str | None = None
    how_to_obtain: str = ""
    decode: Callable[[bytes, str], bytes] | None = None
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Dataset:
    files: tuple[DataFile, ...]
    label: str
    positive: object  # the positive class of Table 1, None if multi-class
    parse: Callable[[list[bytes]], pd.DataFrame]
    categorical: tuple[str, ...]
    source: str


# ---------------------------------------------------------------- file access

def cache_dir() -> Path:
    """The per-user cache folder for downloaded files."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / CACHE_NAME


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def source_url(file: DataFile) -> str | None:
    """Where :func:`download` fetches ``file``: its URL, on the mirror if one is set.

    With :data:`MIRROR_ENV` set (e.g. ``http://127.0.0.1:8000``), the prefix
    :data:`UCI_HOST` of :attr:`DataFile.url` is replaced by the mirror.
    """
    mirror = os.environ.get(MIRROR_ENV)
    if file.url is None or not mirror or not file.url.startswith(UCI_HOST):
        return file.url
    return mirror.rstrip("/") + file.url[len(UCI_HOST):]


def _names(file: DataFile) -> tuple[str, ...]:
    return (file.path,) + file.aliases


def _advice(file: DataFile) -> str:
    held = " or ".join(f"{p} (or {p}.gz)" for p in _names(file))
    ways = [f"set {DATA_ENV} to a folder holding {held}"]
    url = source_url(file)
    if url is not None:
        where = url + (f" (member {file.member})" if file.member else "")
        ways.append(f"download it from {where}")
    if file.how_to_obtain:
        ways.append(file.how_to_obtain)
    return "; or ".join(ways)


def _what(file: DataFile) -> str:
    return "decoded table" if file.decode is not None else "content"


def _decoded(raw: bytes, name: str, file: DataFile, where: str, consequence: str) -> bytes:
    """The canonical text of ``raw`` for a decoded table (``raw`` itself otherwise)."""
    if file.decode is None:
        return raw
    try:
        return file.decode(raw, name)
    except DataFileError as exc:
        raise DataFileError(f"{where} cannot be read as the table {file.path}: {exc}; {consequence}. "
                            f"To obtain a good copy: {_advice(file)}") from exc


def _read_verified(path: Path, file: DataFile) -> bytes:
    """The plain content of ``path`` (a decoded table's canonical text), after checking its sha256."""
    raw = path.read_bytes()
    name = path.name
    if path.suffix == ".gz":
        name = path.stem
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise DataFileError(
                f"{path} is not a valid gzip file ({exc}); expected the "
                f"{_what(file)} of {file.path} with sha256 {file.sha256}. To obtain "
                f"it: {_advice(file)}") from exc
    content = _decoded(raw, name, file, str(path), "nothing was parsed")
    _verify(content, file, f"{path} is corrupted", "nothing was parsed")
    return content


def _verify(content: bytes, file: DataFile, problem: str, consequence: str) -> None:
    """Raise :class:`DataFileError` unless ``content`` has the recorded sha256."""
    digest = _sha256(content)
    if digest != file.sha256:
        raise DataFileError(
            f"{problem}: its {_what(file)} has sha256 {digest}, expected "
            f"{file.sha256}; {consequence}. To obtain a good copy: "
            f"{_advice(file)}")


def _candidates(folder: Path, file: DataFile) -> list[Path]:
    found = []
    for name in _names(file):
        plain = folder / name
        found += [p for p in (plain, plain.with_name(plain.name + ".gz")) if p.is_file()]
    return found


def download(file: DataFile, folder: Path | None = None, *,
             timeout: float | None = None) -> Path:
    """Download ``file`` into ``folder`` (the cache by default), verified.

    The bytes go to a temporary file in the folder :data:`PARTIAL_DIR`; for
    a zip archive the member :attr:`DataFile.member` is extracted, and a
    decoded table (:attr:`DataFile.decode`) is decoded. The content (the
    table's canonical text) is checked against :attr:`DataFile.sha256` and
    only then the file, as served, is renamed to ``folder / file.path``, so
    a failure leaves nothing where the loader looks. The URL is
    :func:`source_url` (the mirror of :data:`MIRROR_ENV`, when set).

    Parameters
    ----------
    file : DataFile
        The file to fetch; its ``url`` must not be None.
    folder : path, optional
        Destination folder (default :func:`cache_dir`).
    timeout : float, optional
        Seconds to wait for the server (default :data:`DOWNLOAD_TIMEOUT`).

    Returns
    -------
    pathlib.Path
        The verified file.

    Raises
    ------
    DataFileError
        On a network error, an HTTP error, a timeout, a bad archive, a file
        that cannot be decoded or a checksum mismatch.
    """
    url = source_url(file)
    if url is None:
        raise DataFileError(
            f"{file.path} (sha256 {file.sha256}) cannot be downloaded "
            f"automatically. To obtain it: {_advice(file)}")
    folder = Path(folder) if folder is not None else cache_dir()
    target = folder / file.path
    target.parent.mkdir(parents=True, exist_ok=True)
    timeout = DOWNLOAD_TIMEOUT if timeout is None else timeout
    partial = folder / PARTIAL_DIR
    partial.mkdir(parents=True, exist_ok=True)
    _remove_stale_partials(partial)
    fd, tmp_name = tempfile.mkstemp(dir=partial, prefix=f"{target.name}.", suffix=".part")
    tmp = Path(tmp_name)
    where = f"{file.path} from {url}"
    try:
        try:
            deadline = time.monotonic() + DOWNLOAD_DEADLINE
            with os.fdopen(fd, "wb") as out, \
                    urllib.request.urlopen(url, timeout=timeout) as resp:
                # read1: whatever has arrived (at most 64 KiB), so that a trickle of
                # bytes still reaches the deadline check
                while chunk := resp.read1(1 << 16):
                    out.write(chunk)
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"the transfer took longer than {DOWNLOAD_DEADLINE:g} s "
                                           f"(DOWNLOAD_DEADLINE)")
        except (OSError, http.client.HTTPException) as exc:
            # HTTP errors (urllib.error.HTTPError), refused connections and
            # timeouts are OSErrors; a transfer cut short before its
            # Content-Length is http.client.IncompleteRead.
            if isinstance(exc, urllib.error.HTTPError):
                reason = f"HTTP {exc.code} {exc.reason}"
            else:
                reason = getattr(exc, "reason", None) or exc
            if isinstance(exc, TimeoutError) or "timed out" in str(reason):
                reason = (f"timed out: {reason} (the server sent nothing for {timeout:g} s, "
                          "DOWNLOAD_TIMEOUT, or the transfer exceeded DOWNLOAD_DEADLINE)")
            raise DataFileError(
                f"downloading {where} failed: {reason!s} "
                f"({type(exc).__name__}). Expected sha256 {file.sha256}. "
                f"To obtain it: {_advice(file)}") from exc
        data = tmp.read_bytes()
        if file.member is not None:
            try:
                with zipfile.ZipFile(io.BytesIO(data)) as archive:
                    data = archive.read(file.member)
            except (zipfile.BadZipFile, KeyError) as exc:
                raise DataFileError(
                    f"{url} is not a zip archive holding {file.member} "
                    f"({exc}). Expected sha256 {file.sha256} for "
                    f"{file.path}. To obtain it: {_advice(file)}") from exc
        content = _decoded(data, Path(file.member or file.path).name, file,
                           f"the download of {where}", "nothing was kept")
        _verify(content, file, f"the download of {where} is corrupted or truncated",
                "nothing was kept")
        tmp.write_bytes(data)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)  # a no-op after the rename
    return target


def _remove_stale_partials(partial: Path) -> None:
    """Remove ``.part`` files of downloads that were killed (older than the deadline)."""
    now = time.time()
    for leftover in partial.glob("*.part"):
        try:
            if now - leftover.stat().st_mtime > DOWNLOAD_DEADLINE + DOWNLOAD_TIMEOUT:
                leftover.unlink()
        except OSError:  # another process removed or finished it
            pass


def fetch(file: DataFile, *, download_missing: bool = True) -> bytes:
    """The verified plain content of one data file (a decoded table's canonical text).

    Looks in ``$DIRICHLET_DATA_DIR``, then in the cache, then downloads into
    the cache (unless ``download_missing`` is False). A corrupted copy is an
    error, not a reason to look further: it raises at once.

    Raises
    ------
    DataFileError
        If the file is missing everywhere (and cannot be downloaded) or a
        copy fails its checksum. The message lists every place looked in and
        why each failed.
    """
    folders = []
    env = os.environ.get(DATA_ENV)
    if env:
        folders.append((f"{DATA_ENV}", Path(env)))
    folders.append(("the cache", cache_dir()))
    places = []  # where we looked and why each place failed
    for label, folder in folders:
        found = _candidates(folder, file)
        if found:
            return _read_verified(found[0], file)
        if not folder.is_dir():
            places.append(f"{label} folder {folder} does not exist")
        else:
            missing = " nor ".join(f"{folder / name}[.gz]" for name in _names(file))
            places.append(f"{label}: no {missing}")
    if not env:
        places.append(f"{DATA_ENV} is not set")
    looked = "; ".join(places)
    if not download_missing or file.url is None:
        raise DataFileError(
            f"data file {file.path} not found (looked in {looked}); expected "
            f"sha256 {file.sha256}. To obtain it: {_advice(file)}")
    try:
        path = download(file)
    except DataFileError as exc:
        raise DataFileError(f"data file {file.path} not found locally ({looked}), and {exc}") from exc
    return _read_verified(path, file)


# ---------------------------------------------------------------- parsers

def _csv(data: bytes, **kwargs) -> pd.DataFrame:
    return pd.read_csv(io.BytesIO(data), **kwargs)


def _categorise(frame: pd.DataFrame, columns) -> pd.DataFrame:
    """Give ``columns`` the category dtype; categories = values present."""
    for col in columns:
        values = frame[col]
        cats = np.sort(values.dropna().unique())
        frame[col] = pd.Categorical(values, categories=cats)
    return frame


ADULT_COLUMNS = (
    "age", "workclass", "fnlwgt", "education", "education-num",
    "marital-status", "occupation", "relationship", "race", "sex",
    "capital-gain", "capital-loss", "hours-per-week", "native-country",
    "income",
)


def _parse_adult(parts: list[bytes]) -> pd.DataFrame:
    opts = dict(header=None, names=ADULT_COLUMNS, sep=",",
                skipinitialspace=True, na_values="?", keep_default_na=False)
    train = _csv(parts[0], **opts)
    # adult.test: a first line "|1x3 Cross validator"; labels end in ".".
    test = _csv(parts[1], skiprows=1, **opts)
    test["income"] = test["income"].str.rstrip(".")
    return pd.concat([train, test], ignore_index=True)


def _parse_bank(parts: list[bytes]) -> pd.DataFrame:
    return _csv(parts[0], sep=";")


SPAM_COLUMNS = tuple(
    [f"word_freq_{w}" for w in (
        "make address all 3d our over remove internet order mail receive "
        "will people report addresses free business email you credit your "
        "font 000 money hp hpl george 650 lab labs telnet 857 data 415 85 "
        "technology 1999 parts pm direct cs meeting original project re edu "
        "table conference").split()]
    + [f"char_freq_{c}" for c in ";([!$#"]
    + ["capital_run_length_average", "capital_run_length_longest",
       "capital_run_length_total", "spam"])


def _parse_spam(parts: list[bytes]) -> pd.DataFrame:
    return _csv(parts[0], header=None, names=SPAM_COLUMNS)


#: Optdigits: 64 counts (0..16) of set pixels in the 4x4 blocks of a 32x32
#: bitmap, row-major (the .names file numbers them 1..64 without names).
DIGIT_COLUMNS = tuple(f"pixel_{r}_{c}" for r in range(8) for c in range(8)) \
    + ("class",)


def _parse_digit(parts: list[bytes]) -> pd.DataFrame:
    return pd.concat([_csv(p, header=None, names=DIGIT_COLUMNS)
                      for p in parts], ignore_index=True)


#: ann-thyroid: the 21 attributes of Quinlan's thyroid data in their order
#: (UCI Thyroid Disease documentation; the ann-thyroid files have no header):
#: age and the five hormone measurements are continuous (rescaled), the
#: other 15 are binary.
THYROID_COLUMNS = (
    "age", "sex", "on_thyroxine", "query_on_thyroxine",
    "on_antithyroid_medication", "sick", "pregnant", "thyroid_surgery",
    "I131_treatment", "query_hypothyroid", "query_hyperthyroid", "lithium",
    "goitre", "tumor", "hypopituitary", "psych", "TSH", "T3", "TT4", "T4U",
    "FTI", "class",
)
_THYROID_NUMERIC = ("age", "TSH", "T3", "TT4", "T4U", "FTI")


def _parse_thyroid(parts: list[bytes]) -> pd.DataFrame:
    frames = [_csv(p, header=None, names=THYROID_COLUMNS, sep=r"\s+")
              for p in parts]
    return pd.concat(frames, ignore_index=True)


def _parse_shopper(parts: list[bytes]) -> pd.DataFrame:
    return _csv(parts[0])


#: Default of Credit Card Clients: the meanings of X1..X23 and Y given by the
#: second header row of UCI's .xls file (the stored CSV has only X1..X23, Y).
CREDIT_COLUMNS = (
    ("LIMIT_BAL", "SEX", "EDUCATION", "MARRIAGE", "AGE", "PAY_0")
    + tuple(f"PAY_{i}" for i in range(2, 7))
    + tuple(f"BILL_AMT{i}" for i in range(1, 7))
    + tuple(f"PAY_AMT{i}" for i in range(1, 7))
    + ("default payment next month",)
)

#: The header of the credit-card table's canonical text (the .xls's first
#: header row, with ``ID`` for its blank first cell; the CSV copy's header).
CREDIT_HEADER = ("ID",) + tuple(f"X{i}" for i in range(1, 24)) + ("Y",)


def _integer_table(values, where: str) -> np.ndarray:
    """``values`` (rows of numbers) as an int64 array; every value must be a whole number."""
    try:
        table = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DataFileError(f"{where}: not a table of numbers ({exc})") from None
    if table.ndim != 2 or table.shape[1] != len(CREDIT_HEADER) or not len(table):
        raise DataFileError(f"{where}: expected rows of {len(CREDIT_HEADER)} numbers, "
                            f"got an array of shape {table.shape}")
    whole = np.isfinite(table) & (table == np.round(table)) & (np.abs(table) < 2.0 ** 53)
    if not whole.all():
        i, j = np.argwhere(~whole)[0]
        raise DataFileError(f"{where}: data row {i + 1}, column {CREDIT_HEADER[j]} holds "
                            f"{table[i, j].item()!r}, not a whole number")
    return table.astype(np.int64)


def _canonical(table: np.ndarray) -> bytes:
    """The canonical text: header ``ID,X1,...,X23,Y``, integers in decimal, LF line ends."""
    body = pd.DataFrame(table).to_csv(header=False, index=False, lineterminator="\n")
    return (",".join(CREDIT_HEADER) + "\n" + body).encode("ascii")


def _decode_credit(raw: bytes, name: str) -> bytes:
    """The canonical text of the credit-card table in UCI's ``.xls`` or in its CSV conversion.

    UCI's ``default of credit card clients.xls`` (sheet 1) has two header
    rows, ``(blank), X1, ..., X23, Y`` and ``ID, LIMIT_BAL, ..., default
    payment next month`` (:data:`CREDIT_COLUMNS`), then one row per client;
    the CSV conversion has the header ``ID,X1,...,X23,Y``. Both must hold
    whole numbers only. Raises :class:`DataFileError` otherwise.
    """
    if name.lower().endswith((".xls", ".xlsx")):
        try:
            from python_calamine import CalamineWorkbook
        except ImportError as exc:  # pragma: no cover - requirements.txt installs it
            raise DataFileError("reading .xls needs the package python-calamine "
                                "(pip install python-calamine)") from exc
        try:
            rows = CalamineWorkbook.from_filelike(io.BytesIO(raw)).get_sheet_by_index(0).to_python()
        except Exception as exc:  # calamine raises its own error types for a damaged workbook
            raise DataFileError(f"not a readable Excel workbook ({type(exc).__name__}: {exc})") from None
        while rows and all(cell in ("", None) for cell in rows[-1]):
            rows.pop()  # trailing blank rows of the sheet's dimension
        width = len(CREDIT_HEADER)
        if any(cell not in ("", None) for row in rows for cell in row[width:]):
            raise DataFileError(f"expected {width} columns, found values beyond them")
        rows = [row[:width] for row in rows]  # blank trailing columns of the sheet's dimension
        first = [str(c).strip() for c in rows[0][1:]] if rows else []
        second = [str(c).strip() for c in rows[1]] if len(rows) > 1 else []
        if first != list(CREDIT_HEADER[1:]) or second != ["ID", *CREDIT_COLUMNS]:
            raise DataFileError("expected the header rows '(blank), X1, ..., X23, Y' and "
                                "'ID, LIMIT_BAL, ..., default payment next month'; got "
                                f"{first[:3]}... and {second[:3]}...")
        table = _integer_table(rows[2:], name)
    else:
        try:
            frame = pd.read_csv(io.BytesIO(raw))
        except (ValueError, UnicodeDecodeError) as exc:  # pandas' ParserError is a ValueError
            raise DataFileError(f"not a readable CSV file ({exc})") from None
        if tuple(map(str, frame.columns)) != CREDIT_HEADER:
            raise DataFileError("the credit-card CSV must have the header ID,X1,...,X23,Y; got "
                                + ",".join(map(str, frame.columns[:5])) + ",...")
        table = _integer_table(frame.to_numpy(), name)
    return _canonical(table)


def _parse_credit(parts: list[bytes]) -> pd.DataFrame:
    frame = _csv(parts[0])  # the canonical text of _decode_credit, already verified
    frame = frame.drop(columns="ID")
    frame.columns = list(CREDIT_COLUMNS)
    return frame


#: South German Credit: English names for the German header (UCI's
#: documentation of the dataset, Groemping 2019), in file order.
GERMAN_COLUMNS = (
    "status", "duration", "credit_history", "purpose", "amount", "savings",
    "employment_duration", "installment_rate", "personal_status_sex",
    "other_debtors", "present_residence", "property", "age",
    "other_installment_plans", "housing", "number_credits", "job",
    "people_liable", "telephone", "foreign_worker", "credit_risk",
)
_GERMAN_HEADER = (
    "laufkont laufzeit moral verw hoehe sparkont beszeit rate famges buerge "
    "wohnzeit verm alter weitkred wohn bishkred beruf pers telef gastarb "
    "kredit").split()


def _parse_german(parts: list[bytes]) -> pd.DataFrame:
    frame = _csv(parts[0], sep=r"\s+")
    if list(frame.columns) != _GERMAN_HEADER:
        raise DataFileError("SouthGermanCredit.asc has an unexpected header")
    frame.columns = list(GERMAN_COLUMNS)
    return frame


# ---------------------------------------------------------------- registry

def _uci(path: str) -> str:
    return f"{UCI_BASE}/{path}"


#: Where UCI serves Default of Credit Card Clients (id 350): a zip archive
#: holding the one sheet ``default of credit card clients.xls``.
CREDIT_URL = f"{UCI_HOST}/static/public/350/default+of+credit+card+clients.zip"

_REGISTRY: dict[str, _Dataset] = {
    "CreditCard": _Dataset(
        files=(DataFile(
            "default_credit_card/default of credit card clients.xls",
            # sha256 of the decoded table's canonical text (_decode_credit), not of the file
            "70b04919874ce71492cd9e08e7bad15389a104e79bebf7811bf338ee89947b20",
            CREDIT_URL, member="default of credit card clients.xls",
            decode=_decode_credit,
            aliases=("default_credit_card/UCI_Credit_Card.csv",)),),
        label="default payment next month", positive=1, parse=_parse_credit,
        categorical=("SEX", "EDUCATION", "MARRIAGE", "PAY_0")
        + tuple(f"PAY_{i}" for i in range(2, 7)),
        source="UCI 350, Default of Credit Card Clients (Yeh & Lien 2009)"),
    "Thyroid": _Dataset(
        files=(
            DataFile("thyroid_ann/ann-train.data",
                     "3da53a156bda36cb0c97e9f4b6b111c9"
                     "226c54c4aa00230de5604b787c47e3a6",
                     _uci("thyroid-disease/ann-train.data")),
            DataFile("thyroid_ann/ann-test.data",
                     "c649ea19416e78c7996cfaaa2a9e281c"
                     "b597d4b075aaa68c494fc3e4ee3aa30b",
                     _uci("thyroid-disease/ann-test.data")),
        ),
        label="class", positive=None, parse=_parse_thyroid,
        categorical=tuple(c for c in THYROID_COLUMNS[:-1]
                          if c not in _THYROID_NUMERIC),
        source="UCI 102, Thyroid Disease, ann-thyroid train + test"),
    "Shopper": _Dataset(
        files=(DataFile(
            "online_shoppers/online_shoppers_intention.csv",
            "b3055ee355f59134d851d32641183cb4a8b45def7124d2f50442a042f358e0d9",
            _uci("00468/online_shoppers_intention.csv")),),
        label="Revenue", positive=True, parse=_parse_shopper,
        categorical=("Month", "OperatingSystems", "Browser", "Region",
                     "TrafficType", "VisitorType", "Weekend"),
        source="UCI 468, Online Shoppers Purchasing Intention (Sakar 2018)"),
    "Digit": _Dataset(
        files=(
            DataFile("optdigits/optdigits.tra",
                     "e1b683cc211604fe8fd8c4417e6a69f3"
                     "1380e0c61d4af22e93cc21e9257ffedd",
                     _uci("optdigits/optdigits.tra")),
            DataFile("optdigits/optdigits.tes",
                     "6ebb3d2fee246a4e99363262ddf8a00a"
                     "3c41bee6014c373ed9d9216ba7f651b8",
                     _uci("optdigits/optdigits.tes")),
        ),
        label="class", positive=None, parse=_parse_digit, categorical=(),
        source="UCI 80, Optical Recognition of Handwritten Digits, tra + tes"),
    "GermanCredit": _Dataset(
        files=(DataFile(
            "south_german_credit/SouthGermanCredit.asc",
            "921fdae321892628147363b74d675d0f9b2fc940e8989064a771b693622313b6",
            _uci("00522/SouthGermanCredit.zip"),
            member="SouthGermanCredit.asc"),),
        # credit_risk: 1 = good, 0 = bad; Table 1's 30 % is the bad share.
        label="credit_risk", positive=0, parse=_parse_german,
        categorical=tuple(c for c in GERMAN_COLUMNS[:-1]
                          if c not in ("duration", "amount", "age")),
        source="UCI 522, South German Credit (Groemping 2019)"),
    "Bank": _Dataset(
        files=(DataFile(
            "bank_marketing/bank-additional-full.csv",
            "74adfc578bf77a7ff4bb1ba4a9f8709d9e3c6907342959c2c8416847e0afb4d8",
            _uci("00222/bank-additional.zip"),
            member="bank-additional/bank-additional-full.csv"),),
        label="y", positive="yes", parse=_parse_bank,
        categorical=("job", "marital", "education", "default", "housing",
                     "loan", "contact", "month", "day_of_week", "poutcome"),
        source="UCI 222, Bank Marketing, bank-additional-full (Moro 2014)"),
    "Spam": _Dataset(
        files=(DataFile(
            "spambase/spambase.data",
            "b1ef93de71f97714d3d7d4f58fc9f718da7bbc8ac8a150eff2778616a8097b12",
            _uci("spambase/spambase.data")),),
        label="spam", positive=1, parse=_parse_spam, categorical=(),
        source="UCI 94, Spambase (Hopkins et al. 1999)"),
    "Adult": _Dataset(
        files=(
            DataFile("adult/adult.data",
                     "5b00264637dbfec36bdeaab5676b0b30"
                     "9ff9eb788d63554ca0a249491c86603d",
                     _uci("adult/adult.data")),
            DataFile("adult/adult.test",
                     "a2a9044bc167a35b2361efbabec64e89"
                     "d69ce82d9790d2980119aac5fd7e9c05",
                     _uci("adult/adult.test")),
        ),
        label="income", positive=">50K", parse=_parse_adult,
        categorical=("workclass", "education", "marital-status",
                     "occupation", "relationship", "race", "sex",
                     "native-country"),
        source="UCI 2, Adult, adult.data + adult.test (Kohavi 1996)"),
}


def _spec(name: str) -> _Dataset:
    if name not in _REGISTRY:
        raise ValueError(
            f"name must be one of {', '.join(DATASETS)}; got {name!r}")
    return _REGISTRY[name]


def files(name: str) -> tuple[DataFile, ...]:
    """The data files of dataset ``name`` (with checksums and URLs)."""
    return _spec(name).files


def label_column(name: str) -> str:
    """The name of the label column in :func:`load` ``(name)``."""
    return _spec(name).label


def positive_class(name: str):
    """The class whose share Table 1 reports, or None for multi-class data."""
    return _spec(name).positive


def source(name: str) -> str:
    """Where dataset ``name`` comes from (UCI id, title, reference)."""
    return _spec(name).source


@functools.lru_cache(maxsize=None)
def _load_cached(name: str, env: str | None, cache: str) -> pd.DataFrame:
    spec = _spec(name)
    parts = [fetch(f) for f in spec.files]
    frame = spec.parse(parts)
    return _categorise(frame, spec.categorical)


def load(name: str) -> pd.DataFrame:
    """Dataset ``name`` of Table 1: its attributes and its label.

    Parameters
    ----------
    name : str
        One of :data:`DATASETS`.

    Returns
    -------
    pandas.DataFrame
        One row per instance (train and test files of UCI concatenated, in
        that order), the attributes with their documented names, and the
        label column :func:`label_column` last. Categorical attributes have
        the ``category`` dtype; missing values (Adult's ``?``) are NaN.
        The frame is a fresh copy; the parsed data are memoised.

    Raises
    ------
    ValueError
        If ``name`` is not one of :data:`DATASETS`.
    DataFileError
        If a file is missing or fails its checksum (see the module notes).
    """
    _spec(name)
    frame = _load_cached(name, os.environ.get(DATA_ENV), str(cache_dir()))
    return frame.copy()


def fetch_all(names=DATASETS) -> None:
    """Fetch and verify every file of the datasets ``names`` (fills the cache from UCI if needed).

    Raises
    ------
    DataFileError
        Listing every file that could not be obtained, each with every place looked in.
    """
    failures = []
    for name in names:
        for file in files(name):
            try:
                fetch(file)
            except DataFileError as exc:
                failures.append(f"{name}: {exc}")
    if failures:
        raise DataFileError(f"{len(failures)} data file(s) could not be obtained:\n" + "\n".join(failures))


def main(argv=None) -> int:
    """Fetch and verify the datasets ``argv`` (all by default): the body of a command-line ``fetch``.

    Prints where downloads are cached and returns 0, or prints every file that could not be
    obtained (each with every place looked in) to stderr and returns 1, without a traceback.
    ``python -c "import sys; from lib.experiments.data import main; sys.exit(main())"``
    fills the cache before working offline.
    """
    import sys

    names = tuple(argv if argv is not None else sys.argv[1:]) or DATASETS
    try:
        for name in names:
            _spec(name)
        fetch_all(names)
    except (ValueError, DataFileError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"verified {', '.join(names)}; downloads are cached in {cache_dir()}")
    return 0
