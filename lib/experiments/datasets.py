"""One record per dataset: its files, how they are read, and its public description.

Every dataset of the book is one :class:`Dataset` entry of :data:`REGISTRY`;
the other modules of :mod:`lib.experiments` read the entry and hold nothing
per dataset, so adding a dataset is one entry (and, for a new file format,
its parser). An entry holds

``name``
    The key of :data:`REGISTRY` (``load(name)``, ``prepare(name)``, ...).
``source``
    Where the data come from: UCI id, title, reference.
``files``
    The :class:`DataFile` records (path in the data folder, sha256, download
    URL, member of a zip archive, decoder of a table verified by its values),
    read by :mod:`lib.experiments.data`, which looks the files up, downloads
    and verifies them.
``parse``
    ``parse(parts) -> DataFrame``: the verified contents of ``files`` (in
    their order) as one frame with the documented column names, the label
    last.
``label``, ``positive``
    The label column, and the class whose share Table 1 reports (None for
    multi-class data).
``domains``, ``classes``
    The public schema (:mod:`lib.experiments.schema`): the documented values
    of every categorical attribute (:class:`Domain`; the attributes that
    :func:`lib.experiments.data.load` gives the ``category`` dtype), and of
    the label.
``bounds``, ``scales``
    The public range of every numerical attribute (:class:`Bound`, read by
    :mod:`lib.experiments.public_bounds`), and the scale of its public bins
    (``"linear"`` when not listed; :mod:`lib.experiments.preprocessing`).
``excluded``
    Columns left out before encoding (Adult's ``fnlwgt``).
``table1``
    The paper's Table 1 row (instances, attributes, classes, % positive), or
    None for a dataset that is not in the paper.

Every column of the parsed frame is the label, a categorical attribute, a
numerical attribute or excluded, exactly one of them (``tests/test_datasets.py``
checks it on the loaded data); :class:`Dataset` refuses an entry whose parts
overlap or whose scales name an attribute without a range. The kinds of a
public domain or range (``"doc"``, ``"definition"``, ``"assumed"``) are
explained in :mod:`lib.experiments.schema` and
:mod:`lib.experiments.public_bounds`.
"""

from __future__ import annotations

import io
import math
import types
from dataclasses import dataclass, field
from typing import Callable, Mapping, NamedTuple

import numpy as np
import pandas as pd

#: The UCI repository's address; every download URL starts with it.
UCI_HOST = "https://archive.ics.uci.edu"

#: Where the UCI repository serves its original files (its ``ml/machine-learning-databases`` tree).
UCI_BASE = f"{UCI_HOST}/ml/machine-learning-databases"

#: The scales of public bins (:func:`lib.experiments.preprocessing.public_edges`).
SCALE_NAMES = ("linear", "log", "symlog")


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
        canonical text and :func:`lib.experiments.data.fetch` returns it.
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


class Domain(NamedTuple):
    """The public values of one categorical attribute (or of the label)."""

    values: tuple
    other: bool    # one extra code for every value not listed (missing, undocumented)
    kind: str      # "doc" or "assumed"
    source: str

    @property
    def size(self) -> int:
        """The number of codes: the listed values plus the ``other`` code if any."""
        return len(self.values) + int(self.other)


class Bound(NamedTuple):
    """Public range of one numerical attribute and where it comes from."""

    lower: float
    upper: float
    kind: str      # "doc", "definition" or "assumed"
    source: str


_DOMAIN_KINDS = ("doc", "assumed")
_BOUND_KINDS = ("doc", "definition", "assumed")


@dataclass(frozen=True, eq=False)
class Dataset:
    """Everything the book knows about one dataset (see the module notes).

    Attributes
    ----------
    name : str
        The dataset's key in :data:`REGISTRY`.
    source : str
        UCI id, title and reference.
    files : tuple of DataFile
        The files, in the order ``parse`` reads them.
    parse : callable
        ``parse(parts) -> pandas.DataFrame``: the verified contents of
        ``files`` as one frame, documented column names, the label last.
    label : str
        The label column.
    positive : object
        The class whose share Table 1 reports; None for multi-class data.
    classes : Domain
        The public classes, in code order.
    domains : mapping of str to Domain
        The public domain of every categorical attribute, in column order.
    bounds : mapping of str to Bound
        The public range of every numerical attribute that is encoded.
    scales : mapping of str to str
        The scale (one of :data:`SCALE_NAMES`) of the public bins of a
        numerical attribute; ``"linear"`` when not listed.
    excluded : tuple of str
        Columns left out before encoding.
    table1 : tuple or None
        The paper's Table 1 row: instances, attributes, classes and % positive
        (None for multi-class data); None for a dataset the paper does not use.

    Raises
    ------
    ValueError
        If the label, the categorical, the numerical and the excluded columns
        overlap, a scale names an attribute without a range or is not one of
        :data:`SCALE_NAMES` (``"symlog"`` needs a range symmetric about 0), a
        range is not finite with ``lower < upper``, a domain lists a value
        twice, or a kind is not one of those of the module notes.
    """

    name: str
    source: str
    files: tuple[DataFile, ...]
    parse: Callable[[list[bytes]], pd.DataFrame]
    label: str
    positive: object
    classes: Domain
    domains: Mapping[str, Domain]
    bounds: Mapping[str, Bound]
    scales: Mapping[str, str] = field(default_factory=dict)
    excluded: tuple[str, ...] = ()
    table1: tuple | None = None

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name must be a non-empty string; got {self.name!r}")
        if not self.files or not all(isinstance(f, DataFile) for f in self.files):
            raise ValueError(f"{self.name}: files must be a non-empty tuple of DataFile; got {self.files!r}")
        for attr in ("domains", "bounds", "scales"):
            object.__setattr__(self, attr, types.MappingProxyType(dict(getattr(self, attr))))
        object.__setattr__(self, "files", tuple(self.files))
        object.__setattr__(self, "excluded", tuple(self.excluded))
        parts = {"label": {self.label}, "domains": set(self.domains), "bounds": set(self.bounds),
                 "excluded": set(self.excluded)}
        names = list(parts)
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                if parts[a] & parts[b]:
                    raise ValueError(f"{self.name}: {a} and {b} must not share columns; both hold "
                                     f"{sorted(parts[a] & parts[b])}")
        for attr, d in [*self.domains.items(), ("(label)", self.classes)]:
            if not isinstance(d, Domain) or d.kind not in _DOMAIN_KINDS:
                raise ValueError(f"{self.name}: the domain of {attr} must be a Domain of kind "
                                 f"{' or '.join(_DOMAIN_KINDS)}; got {d!r}")
            if len(set(d.values)) != len(d.values):
                raise ValueError(f"{self.name}: the domain of {attr} lists a value twice")
        for attr, b in self.bounds.items():
            if not isinstance(b, Bound) or b.kind not in _BOUND_KINDS:
                raise ValueError(f"{self.name}: the range of {attr} must be a Bound of kind "
                                 f"{', '.join(_BOUND_KINDS)}; got {b!r}")
            if not (math.isfinite(b.lower) and math.isfinite(b.upper) and b.lower < b.upper):
                raise ValueError(f"{self.name}: the range of {attr} must be finite with lower < upper; "
                                 f"got [{b.lower}, {b.upper}]")
        for attr, scale in self.scales.items():
            if attr not in self.bounds:
                raise ValueError(f"{self.name}: scales names {attr!r}, which has no public range in bounds")
            if scale not in SCALE_NAMES:
                raise ValueError(f"{self.name}: the scale of {attr} must be one of "
                                 f"{', '.join(SCALE_NAMES)}; got {scale!r}")
            if scale == "symlog" and self.bounds[attr].lower != -self.bounds[attr].upper:
                raise ValueError(f"{self.name}: the 'symlog' scale of {attr} needs a range symmetric "
                                 f"about 0; got {self.bounds[attr][:2]}")

    @property
    def categorical(self) -> tuple[str, ...]:
        """The categorical attributes (the keys of :attr:`domains`)."""
        return tuple(self.domains)

    def scale(self, attribute: str) -> str:
        """The scale of the public bins of numerical ``attribute`` (``"linear"`` if not listed)."""
        return self.scales.get(attribute, "linear")


# ---------------------------------------------------------------- parsers

def _csv(data: bytes, **kwargs) -> pd.DataFrame:
    return pd.read_csv(io.BytesIO(data), **kwargs)


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


def _uci(path: str) -> str:
    return f"{UCI_BASE}/{path}"


#: Where UCI serves Default of Credit Card Clients (id 350): a zip archive
#: holding the one sheet ``default of credit card clients.xls``.
CREDIT_URL = f"{UCI_HOST}/static/public/350/default+of+credit+card+clients.zip"



# ---------------------------------------------------------------- shared parts of the entries

_AGE = Bound(0, 125, "assumed", "a human age; Zafarani-Clifton's own example (Section 5): age between 0 and 125")
_BINARY01 = Domain((0, 1), False, "doc", "ann-thyroid (UCI 102): 15 binary attributes coded 0/1")
_LOG = "log"


def _ints(lo, hi, kind, source, other=False) -> Domain:
    return Domain(tuple(range(lo, hi + 1)), other, kind, source)


# ---------------------------------------------------------------- the eight datasets of Table 1

_PAY = Domain(tuple(range(-2, 10)), False, "assumed",
              "UCI 350 page: -1 = pay duly, 1..9 = months of delay; -2 and 0 occur in the file and "
              "are read as 'no consumption' and 'revolving credit' in public discussions of the data")

CREDIT_CARD = Dataset(
    name="CreditCard",
    source="UCI 350, Default of Credit Card Clients (Yeh & Lien 2009)",
    files=(DataFile(
        "default_credit_card/default of credit card clients.xls",
        # sha256 of the decoded table's canonical text (_decode_credit), not of the file
        "70b04919874ce71492cd9e08e7bad15389a104e79bebf7811bf338ee89947b20",
        CREDIT_URL, member="default of credit card clients.xls",
        decode=_decode_credit,
        aliases=("default_credit_card/UCI_Credit_Card.csv",)),),
    parse=_parse_credit,
    label="default payment next month", positive=1,
    classes=Domain((0, 1), False, "doc", "UCI 350 page: default payment next month, yes = 1, no = 0"),
    domains={
        "SEX": Domain((1, 2), False, "doc", "UCI 350 page: 1 = male, 2 = female"),
        "EDUCATION": Domain((1, 2, 3, 4), True, "doc",
                            "UCI 350 page: 1..4 (graduate school, university, high school, others); "
                            "undocumented codes go to 'other'"),
        "MARRIAGE": Domain((1, 2, 3), True, "doc",
                           "UCI 350 page: 1..3 (married, single, others); undocumented codes go to 'other'"),
        **{f"PAY_{i}": _PAY for i in (0, 2, 3, 4, 5, 6)},
    },
    bounds={
        "LIMIT_BAL": Bound(0, 2_000_000, "assumed", "credit limit, NT dollars"),
        "AGE": _AGE,
        **{f"BILL_AMT{i}": Bound(-2_000_000, 2_000_000, "assumed", "bill statement, NT dollars (can be negative)")
           for i in range(1, 7)},
        **{f"PAY_AMT{i}": Bound(0, 2_000_000, "assumed", "amount paid, NT dollars") for i in range(1, 7)},
    },
    scales={"LIMIT_BAL": _LOG, **{f"PAY_AMT{i}": _LOG for i in range(1, 7)},
            **{f"BILL_AMT{i}": "symlog" for i in range(1, 7)}},
    table1=(30000, 23, 2, 22),
)

_THYROID_NUMERIC = ("age", "TSH", "T3", "TT4", "T4U", "FTI")

THYROID = Dataset(
    name="Thyroid",
    source="UCI 102, Thyroid Disease, ann-thyroid train + test",
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
    parse=_parse_thyroid,
    label="class", positive=None,
    classes=Domain((1, 2, 3), False, "doc", "ann-Readme: three classes 1, 2, 3"),
    domains={a: _BINARY01 for a in THYROID_COLUMNS[:-1] if a not in _THYROID_NUMERIC},
    bounds={a: Bound(0, 1, "assumed", "ann-thyroid stores the continuous attributes rescaled (age/100); "
                                      "ann-Readme gives no range")
            for a in _THYROID_NUMERIC},
    scales={a: _LOG for a in ("TSH", "T3", "TT4", "T4U", "FTI")},
    table1=(7200, 21, 3, None),
)

_SHOPPER_BOUNDS = {
    "Administrative": Bound(0, 1000, "assumed", "pages visited in a session"),
    "Administrative_Duration": Bound(0, 86400, "definition", "seconds spent in a session of at most a day"),
    "Informational": Bound(0, 1000, "assumed", "pages visited in a session"),
    "Informational_Duration": Bound(0, 86400, "definition", "seconds spent in a session of at most a day"),
    "ProductRelated": Bound(0, 1000, "assumed", "pages visited in a session"),
    "ProductRelated_Duration": Bound(0, 86400, "definition", "seconds spent in a session of at most a day"),
    "BounceRates": Bound(0, 1, "definition", "a rate (share of sessions)"),
    "ExitRates": Bound(0, 1, "definition", "a rate (share of page views)"),
    "PageValues": Bound(0, 1000, "assumed", "average value of a page (Google Analytics)"),
    "SpecialDay": Bound(0, 1, "doc", "UCI page: closeness to a special day, 0 .. 1"),
}

SHOPPER = Dataset(
    name="Shopper",
    source="UCI 468, Online Shoppers Purchasing Intention (Sakar 2018)",
    files=(DataFile(
        "online_shoppers/online_shoppers_intention.csv",
        "b3055ee355f59134d851d32641183cb4a8b45def7124d2f50442a042f358e0d9",
        _uci("00468/online_shoppers_intention.csv")),),
    parse=_parse_shopper,
    label="Revenue", positive=True,
    classes=Domain((False, True), False, "doc", "UCI 468 page: Revenue, boolean"),
    domains={
        "Month": Domain(("Jan", "Feb", "Mar", "Apr", "May", "June", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"),
                        False, "doc", "UCI 468 page: month of the visit (the file writes 'June')"),
        "OperatingSystems": _ints(1, 8, "assumed", "integer codes 1..8 (Sakar et al. 2019 give counts only)"),
        "Browser": _ints(1, 13, "assumed", "integer codes 1..13 (Sakar et al. 2019 give counts only)"),
        "Region": _ints(1, 9, "assumed", "integer codes 1..9 (Sakar et al. 2019 give counts only)"),
        "TrafficType": _ints(1, 20, "assumed", "integer codes 1..20 (Sakar et al. 2019 give counts only)"),
        "VisitorType": Domain(("New_Visitor", "Other", "Returning_Visitor"), False, "doc",
                              "UCI 468 page: new, returning or other visitor"),
        "Weekend": Domain((False, True), False, "doc", "UCI 468 page: boolean"),
    },
    bounds=_SHOPPER_BOUNDS,
    scales={a: _LOG for a in _SHOPPER_BOUNDS if a != "SpecialDay"},
    table1=(12330, 17, 2, 15),
)

DIGIT = Dataset(
    name="Digit",
    source="UCI 80, Optical Recognition of Handwritten Digits, tra + tes",
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
    parse=_parse_digit,
    label="class", positive=None,
    classes=Domain(tuple(range(10)), False, "doc", "optdigits.names: class codes 0..9"),
    domains={},
    bounds={a: Bound(0, 16, "doc", "optdigits.names: integers in the range 0..16") for a in DIGIT_COLUMNS[:-1]},
    table1=(5620, 64, 10, None),
)

_GERMAN_DOC = "codetable.txt of South German Credit (Groemping 2019)"

GERMAN_CREDIT = Dataset(
    name="GermanCredit",
    source="UCI 522, South German Credit (Groemping 2019)",
    files=(DataFile(
        "south_german_credit/SouthGermanCredit.asc",
        "921fdae321892628147363b74d675d0f9b2fc940e8989064a771b693622313b6",
        _uci("00522/SouthGermanCredit.zip"),
        member="SouthGermanCredit.asc"),),
    parse=_parse_german,
    # credit_risk: 1 = good, 0 = bad; Table 1's 30 % is the bad share.
    label="credit_risk", positive=0,
    classes=Domain((0, 1), False, "doc", _GERMAN_DOC + ": credit_risk 0 = bad, 1 = good"),
    domains={
        "status": _ints(1, 4, "doc", _GERMAN_DOC),
        "credit_history": _ints(0, 4, "doc", _GERMAN_DOC),
        "purpose": _ints(0, 10, "doc", _GERMAN_DOC),
        "savings": _ints(1, 5, "doc", _GERMAN_DOC),
        "employment_duration": _ints(1, 5, "doc", _GERMAN_DOC),
        "installment_rate": _ints(1, 4, "doc", _GERMAN_DOC),
        "personal_status_sex": _ints(1, 4, "doc", _GERMAN_DOC),
        "other_debtors": _ints(1, 3, "doc", _GERMAN_DOC),
        "present_residence": _ints(1, 4, "doc", _GERMAN_DOC),
        "property": _ints(1, 4, "doc", _GERMAN_DOC),
        "other_installment_plans": _ints(1, 3, "doc", _GERMAN_DOC),
        "housing": _ints(1, 3, "doc", _GERMAN_DOC),
        "number_credits": _ints(1, 4, "doc", _GERMAN_DOC),
        "job": _ints(1, 4, "doc", _GERMAN_DOC),
        "people_liable": _ints(1, 2, "doc", _GERMAN_DOC),
        "telephone": _ints(1, 2, "doc", _GERMAN_DOC),
        "foreign_worker": _ints(1, 2, "doc", _GERMAN_DOC),
    },
    bounds={
        "duration": Bound(0, 120, "assumed", "codetable.txt: duration in months; ten years"),
        "amount": Bound(0, 100_000, "assumed", "codetable.txt: credit amount in DM"),
        "age": _AGE,
    },
    scales={"amount": _LOG},
    table1=(1000, 20, 2, 30),
)

_BANK_DOC = "bank-additional-names.txt"

BANK = Dataset(
    name="Bank",
    source="UCI 222, Bank Marketing, bank-additional-full (Moro 2014)",
    files=(DataFile(
        "bank_marketing/bank-additional-full.csv",
        "74adfc578bf77a7ff4bb1ba4a9f8709d9e3c6907342959c2c8416847e0afb4d8",
        _uci("00222/bank-additional.zip"),
        member="bank-additional/bank-additional-full.csv"),),
    parse=_parse_bank,
    label="y", positive="yes",
    classes=Domain(("no", "yes"), False, "doc", _BANK_DOC + ": y, has the client subscribed"),
    domains={
        "job": Domain(("admin.", "blue-collar", "entrepreneur", "housemaid", "management", "retired",
                       "self-employed", "services", "student", "technician", "unemployed", "unknown"),
                      False, "doc", _BANK_DOC),
        "marital": Domain(("divorced", "married", "single", "unknown"), False, "doc", _BANK_DOC),
        "education": Domain(("basic.4y", "basic.6y", "basic.9y", "high.school", "illiterate",
                             "professional.course", "university.degree", "unknown"), False, "doc", _BANK_DOC),
        **{a: Domain(("no", "unknown", "yes"), False, "doc", _BANK_DOC) for a in ("default", "housing", "loan")},
        "contact": Domain(("cellular", "telephone"), False, "doc", _BANK_DOC),
        "month": Domain(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"),
                        False, "doc", _BANK_DOC),
        "day_of_week": Domain(("mon", "tue", "wed", "thu", "fri"), False, "doc", _BANK_DOC),
        "poutcome": Domain(("failure", "nonexistent", "success"), False, "doc", _BANK_DOC),
    },
    bounds={
        "age": _AGE,
        "duration": Bound(0, 86400, "definition", "bank-additional-names.txt: call duration in seconds; one day"),
        "campaign": Bound(0, 100, "assumed", "number of contacts in this campaign"),
        "pdays": Bound(0, 999, "doc", "bank-additional-names.txt: days since last contact, 999 = never"),
        "previous": Bound(0, 100, "assumed", "number of contacts before this campaign"),
        "emp.var.rate": Bound(-10, 10, "assumed", "quarterly employment variation rate, percent"),
        "cons.price.idx": Bound(0, 200, "assumed", "monthly consumer price index (base 100)"),
        "cons.conf.idx": Bound(-100, 100, "definition", "consumer confidence: a balance of answers, -100 .. 100"),
        "euribor3m": Bound(-1, 10, "assumed", "3-month Euribor rate, percent"),
        "nr.employed": Bound(0, 10000, "assumed", "number of employees, thousands"),
    },
    scales={a: _LOG for a in ("duration", "campaign", "pdays", "previous")},
    table1=(41188, 20, 2, 11),
)

_SPAM_PCT = Bound(0, 100, "doc", "spambase.names: continuous real [0,100], a percentage of words/characters")
_SPAM_BOUNDS = {
    **{c: _SPAM_PCT for c in SPAM_COLUMNS[:-4]},
    "capital_run_length_average": Bound(1, 10000, "assumed", "spambase.names: [1, ...]; upper end assumed"),
    "capital_run_length_longest": Bound(1, 10000, "assumed", "spambase.names: [1, ...]; upper end assumed"),
    "capital_run_length_total": Bound(1, 100000, "assumed", "spambase.names: [1, ...]; upper end assumed"),
}

SPAM = Dataset(
    name="Spam",
    source="UCI 94, Spambase (Hopkins et al. 1999)",
    files=(DataFile(
        "spambase/spambase.data",
        "b1ef93de71f97714d3d7d4f58fc9f718da7bbc8ac8a150eff2778616a8097b12",
        _uci("spambase/spambase.data")),),
    parse=_parse_spam,
    label="spam", positive=1,
    classes=Domain((0, 1), False, "doc", "spambase.names: 1 = spam, 0 = not spam"),
    domains={},
    bounds=_SPAM_BOUNDS,
    scales=dict.fromkeys(_SPAM_BOUNDS, _LOG),
    table1=(4601, 57, 2, 39),
)

_ADULT_DOC = "adult.names; unknown values are written '?' (the 'other' code)"

ADULT = Dataset(
    name="Adult",
    source="UCI 2, Adult, adult.data + adult.test (Kohavi 1996)",
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
    parse=_parse_adult,
    label="income", positive=">50K",
    classes=Domain(("<=50K", ">50K"), False, "doc", "adult.names: >50K, <=50K"),
    domains={
        "workclass": Domain(("Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov",
                             "State-gov", "Without-pay", "Never-worked"), True, "doc", _ADULT_DOC),
        "education": Domain(("Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm",
                             "Assoc-voc", "9th", "7th-8th", "12th", "Masters", "1st-4th", "10th", "Doctorate",
                             "5th-6th", "Preschool"), True, "doc", _ADULT_DOC),
        "marital-status": Domain(("Married-civ-spouse", "Divorced", "Never-married", "Separated", "Widowed",
                                  "Married-spouse-absent", "Married-AF-spouse"), True, "doc", _ADULT_DOC),
        "occupation": Domain(("Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial",
                              "Prof-specialty", "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical",
                              "Farming-fishing", "Transport-moving", "Priv-house-serv", "Protective-serv",
                              "Armed-Forces"), True, "doc", _ADULT_DOC),
        "relationship": Domain(("Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried"),
                               True, "doc", _ADULT_DOC),
        "race": Domain(("White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"), True, "doc",
                       _ADULT_DOC),
        "sex": Domain(("Female", "Male"), True, "doc", _ADULT_DOC),
        "native-country": Domain((
            "United-States", "Cambodia", "England", "Puerto-Rico", "Canada", "Germany",
            "Outlying-US(Guam-USVI-etc)", "India", "Japan", "Greece", "South", "China", "Cuba", "Iran",
            "Honduras", "Philippines", "Italy", "Poland", "Jamaica", "Vietnam", "Mexico", "Portugal", "Ireland",
            "France", "Dominican-Republic", "Laos", "Ecuador", "Taiwan", "Haiti", "Columbia", "Hungary",
            "Guatemala", "Nicaragua", "Scotland", "Thailand", "Yugoslavia", "El-Salvador", "Trinadad&Tobago",
            "Peru", "Hong", "Holand-Netherlands"), True, "doc", _ADULT_DOC),
    },
    bounds={
        "age": _AGE,
        "education-num": Bound(1, 16, "doc", "adult.names lists 16 education levels; education-num numbers them"),
        "capital-gain": Bound(0, 99999, "assumed",
                              "adult.names: 'continuous'; five-digit Census income field (0 .. 99999)"),
        "capital-loss": Bound(0, 99999, "assumed",
                              "adult.names: 'continuous'; five-digit Census income field (0 .. 99999)"),
        "hours-per-week": Bound(0, 168, "definition", "hours in a week"),
    },
    scales={"capital-gain": _LOG, "capital-loss": _LOG},
    # fnlwgt: the Census Bureau's sampling weight of the record (a property of the survey
    # design, not of the person); Table 1 gives Adult 13 attributes where UCI ships 14
    # (lib.experiments.preprocessing's notes).
    excluded=("fnlwgt",),
    table1=(48842, 13, 2, 24),
)

#: Every dataset of the book by name, the eight of Table 1 in the paper's order.
REGISTRY: dict[str, Dataset] = {d.name: d for d in (
    CREDIT_CARD, THYROID, SHOPPER, DIGIT, GERMAN_CREDIT, BANK, SPAM, ADULT)}

#: The datasets of Table 1, in the paper's order.
DATASETS: tuple[str, ...] = tuple(REGISTRY)


def get(name: str, argument: str = "name") -> Dataset:
    """The entry of dataset ``name``.

    Parameters
    ----------
    name : str
        One of :data:`DATASETS`.
    argument : str
        The argument's name in the error message.

    Returns
    -------
    Dataset

    Raises
    ------
    ValueError
        If ``name`` is not a key of :data:`REGISTRY`; the message lists the keys.

    Examples
    --------
    >>> get("Adult").label, get("Adult").excluded
    ('income', ('fnlwgt',))
    """
    if not isinstance(name, str) or name not in REGISTRY:
        raise ValueError(f"{argument} must be one of {', '.join(REGISTRY)}; got {name!r}")
    return REGISTRY[name]
