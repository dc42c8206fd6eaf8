"""Finding, downloading, verifying and loading the files of the datasets (Section 5.1, Table 1).

What each dataset is (its files with their checksums and URLs, its parser, its
label and its public schema) is its entry in :mod:`lib.experiments.datasets`;
this module does the file work for any entry. :func:`load` returns one dataset
as a :class:`pandas.DataFrame` of its attributes and its label, with the
column names of the UCI documentation. The attributes of the entry's
``domains`` (the ones the documentation describes as categorical, including
integer-coded ones such as South German Credit's ``status``) have the pandas
``category`` dtype, whose categories are the values that occur in the whole
file; numeric attributes keep a numeric dtype.
:mod:`lib.experiments.preprocessing` turns this frame into the integer codes
the models use.

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
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from lib.experiments import datasets
from lib.experiments.datasets import DATASETS, UCI_HOST, DataFile, DataFileError


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

#: Environment variable naming a mirror of the UCI repository: a base URL that
#: replaces :data:`UCI_HOST` in every download (the same file layout below it).
MIRROR_ENV = "DIRICHLET_UCI_MIRROR"


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


# ---------------------------------------------------------------- loading

def _categorise(frame: pd.DataFrame, columns) -> pd.DataFrame:
    """Give ``columns`` the category dtype; categories = values present."""
    for col in columns:
        values = frame[col]
        cats = np.sort(values.dropna().unique())
        frame[col] = pd.Categorical(values, categories=cats)
    return frame


def files(name: str) -> tuple[DataFile, ...]:
    """The data files of dataset ``name`` (with checksums and URLs)."""
    return datasets.get(name).files


def label_column(name: str) -> str:
    """The name of the label column in :func:`load` ``(name)``."""
    return datasets.get(name).label


def positive_class(name: str) -> object:
    """The class whose share Table 1 reports, or None for multi-class data."""
    return datasets.get(name).positive


def source(name: str) -> str:
    """Where dataset ``name`` comes from (UCI id, title, reference)."""
    return datasets.get(name).source


@functools.lru_cache(maxsize=None)
def _load_cached(name: str, env: str | None, cache: str) -> pd.DataFrame:
    entry = datasets.get(name)
    parts = [fetch(f) for f in entry.files]
    return _categorise(entry.parse(parts), entry.categorical)


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
    datasets.get(name)
    frame = _load_cached(name, os.environ.get(DATA_ENV), str(cache_dir()))
    return frame.copy()


def fetch_all(names: Iterable[str] = DATASETS) -> None:
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


def main(argv: Sequence[str] | None = None) -> int:
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
            datasets.get(name)
        fetch_all(names)
    except (ValueError, DataFileError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"verified {', '.join(names)}; downloads are cached in {cache_dir()}")
    return 0
