"""Oracles: how an answer is judged.

* `compare` — the differential oracle: the same statement on quire and on
  MariaDB. Error vs success, error codes when both fail, column count,
  column type classes, the row multiset (or the ordered list when the
  query has a total ORDER BY), affected-row counts, and whether there were
  warnings. Values are compared as text except where the text is
  legitimately different: floating-point columns are compared as numbers
  within a relative tolerance. Nothing else is normalised.
* `tlp_*` — SQLancer's Ternary Logic Partitioning, on quire alone: a query
  Q and a predicate p; Q's rows must be exactly (as a multiset) the rows of
  Q WHERE p, Q WHERE NOT p and Q WHERE p IS NULL together. The union is
  done here (quire has no UNION yet), which is equivalent to UNION ALL.
  Variants for DISTINCT, GROUP BY and MIN/MAX/COUNT/SUM aggregates.
* `norec` — SQLancer's NoREC, on quire alone: SELECT COUNT(*) ... WHERE p
  (which the planner may optimise: index ranges, pushed-down conjuncts)
  against SUM((p) IS TRUE) over the unfiltered FROM clause (which it
  cannot).
* `Known` — the known-differences list (known_differences.toml): each
  entry a matcher over a difference; a matching difference is explained.
"""

import collections
import math
import re
import tomllib
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

# Relative tolerance for floating-point values. Both servers print doubles
# with up to 17 significant digits, and a SUM/AVG over doubles depends on
# the order the rows were added in.
FLOAT_REL_TOL = 1e-9


@dataclass
class Diff:
    """One difference between quire's and MariaDB's answer (or one oracle
    violation on quire alone: kind 'tlp' / 'norec' / 'hang')."""

    kind: str  # status errcode colcount types rows warnings affected tlp norec hang
    detail: str
    quire_error: int = None
    mariadb_error: int = None
    quire_types: list = field(default_factory=list)
    mariadb_types: list = field(default_factory=list)
    # Rows each side returned (kind 'rows'), when known.
    quire_rows: int = None
    mariadb_rows: int = None
    # Kind 'rows': the rows are the same once the DOUBLE columns (of both
    # sides) are left out, so only DOUBLE values differ.
    float_only: bool = False
    # MariaDB's warnings ("code message"), for entries that name one.
    mariadb_warnings: list = field(default_factory=list)

    def signature(self):
        """What must stay the same while minimising."""
        if self.kind in ("status", "errcode"):
            return (self.kind, self.quire_error, self.mariadb_error)
        return (self.kind,)


# ---------------------------------------------------------------------------
# Value normalisation


def _num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def cell_equal(a, b, qcls, mcls):
    if a == b:
        return True
    if a is None or b is None:
        return False
    if "float" in (qcls, mcls):
        x, y = _num(a), _num(b)
        if x is None or y is None:
            return False
        if math.isinf(x) or math.isinf(y) or math.isnan(x) or math.isnan(y):
            return x == y
        return math.isclose(x, y, rel_tol=FLOAT_REL_TOL, abs_tol=1e-12)
    if qcls != mcls and {qcls, mcls} <= {"int", "decimal"}:
        # A type difference is reported on its own; the values are then
        # compared as numbers.
        try:
            return Decimal(a) == Decimal(b)
        except InvalidOperation:
            return False
    return False


def sort_key(row, classes):
    """A total order on rows for multiset comparison: numbers by value
    (floats as floats, integers and decimals exactly), everything else as
    text, NULL first. Rows equal under cell_equal then sit at the same
    position in both sorted lists (unless two different floats lie within
    the tolerance of each other)."""
    out = []
    for v, c in zip(row, classes):
        if v is None:
            out.append((0, 0, ""))
        elif c == "float":
            x = _num(v)
            out.append((1, x, "") if x is not None and not math.isnan(x) else (2, 0, v))
        elif c in ("int", "decimal"):
            try:
                out.append((1, Decimal(v), ""))
            except InvalidOperation:
                out.append((2, 0, v))
        else:
            out.append((2, 0, v))
    return out


def rows_equal(qrows, mrows, qcls, mcls, ordered):
    """Same rows (as a list when `ordered`, else as a multiset), values
    compared with cell_equal."""
    if len(qrows) != len(mrows):
        return False

    def same(qr, mr):
        return all(cell_equal(a, b, qc, mc) for a, b, qc, mc in zip(qr, mr, qcls, mcls))

    if ordered:
        return all(same(qr, mr) for qr, mr in zip(qrows, mrows))
    # Fast path: both sorted by value, compared pairwise.
    classes = [q if q == "float" or m != "float" else m for q, m in zip(qcls, mcls)]
    try:
        qs = sorted(qrows, key=lambda r: sort_key(r, classes))
        ms = sorted(mrows, key=lambda r: sort_key(r, classes))
    except TypeError:
        qs, ms = sorted(qrows, key=repr), sorted(mrows, key=repr)
    if all(same(qr, mr) for qr, mr in zip(qs, ms)):
        return True
    # Slow path: floats equal within the tolerance can sort differently (a
    # SUM over DOUBLEs differs in the last digits from group to group), so
    # match rows one by one: identical text first, then any equal row.
    left = collections.Counter(tuple(r) for r in mrows)
    rest_q = []
    for r in qrows:
        r = tuple(r)
        if left[r] > 0:
            left[r] -= 1
        else:
            rest_q.append(r)
    rest_m = [r for r, n in left.items() for _ in range(n)]
    if len(rest_q) > 5000:  # bounded work: that many leftovers is a difference
        return False
    for qr in rest_q:
        for i, mr in enumerate(rest_m):
            if same(qr, mr):
                rest_m.pop(i)
                break
        else:
            return False
    return True


def show_rows(rows, n=8):
    if rows is None:
        return "(no result set)"
    s = "; ".join("(" + ", ".join("NULL" if v is None else repr(v) for v in r) + ")" for r in rows[:n])
    return s + (f" ... ({len(rows)} rows)" if len(rows) > n else f" [{len(rows)} rows]")


# ---------------------------------------------------------------------------
# The differential oracle

# quire's answer to what it does not implement yet.
UNSUPPORTED = 1235
SYNTAX = 1064
# MariaDB stopped the statement (max_statement_time): no answer to compare.
MARIADB_TIMEOUT = 1969


def unsupported_reason(oq, om):
    """The bucket name when quire refused the statement as unsupported,
    else None. 1064 counts only when MariaDB parsed the statement."""
    if oq.error == UNSUPPORTED:
        m = re.search(r"support '([^']*)'", oq.message) or re.search(r"support (.*)", oq.message)
        what = m.group(1) if m else oq.message
        what = re.sub(r"\d+", "N", what)[:60]
        return f"1235 {what}"
    if oq.error == SYNTAX and om.error != SYNTAX:
        return "1064 syntax"
    return None


# Errors a write statement raises at the row that fails (NULL into NOT NULL,
# duplicate key, out of range, bad value, too long, arithmetic overflow,
# truncated value, division by zero in strict mode). A write that touches
# several failing rows stops at the first in its access path's order, which
# depends on the plan: known_differences.toml, dml-first-failing-row.
ROW_ERRORS = {1048, 1062, 1264, 1292, 1365, 1366, 1406, 1690}


def differ_in_floats_only(oq, om):
    """Whether two results with the same columns are equal as multisets of
    rows once every column that is a DOUBLE on either side is dropped (and
    there is such a column)."""
    keep = [i for i, (q, m) in enumerate(zip(oq.columns, om.columns)) if q != "float" and m != "float"]
    if len(keep) == len(oq.columns) or len(oq.rows) != len(om.rows):
        return False
    cut = lambda rows: collections.Counter(tuple(r[i] for i in keep) for r in rows)
    return cut(oq.rows) == cut(om.rows)


def compare(oq, om, ordered, dml=False):
    """Differences between quire's outcome `oq` and MariaDB's `om`."""
    if oq.error is not None or om.error is not None:
        if oq.error is not None and om.error is not None:
            if dml and oq.error in ROW_ERRORS and om.error in ROW_ERRORS:
                # Both refused the statement for a row (and rolled it back):
                # which row came first is the plan's choice.
                return []
            if oq.error != om.error:
                return [Diff("errcode", f"quire: {oq.short()} / mariadb: {om.short()}",
                             quire_error=oq.error, mariadb_error=om.error)]
            return []
        return [Diff("status", f"quire: {oq.short()} / mariadb: {om.short()}",
                     quire_error=oq.error, mariadb_error=om.error)]
    diffs = []
    if dml or oq.rows is None or om.rows is None:
        if (oq.rows is None) != (om.rows is None):
            diffs.append(Diff("colcount", f"result set on one side only: quire {oq.short()} / mariadb {om.short()}"))
        elif dml and oq.affected != om.affected:
            diffs.append(Diff("affected", f"affected rows: quire {oq.affected} / mariadb {om.affected}"))
    if oq.rows is not None and om.rows is not None:
        if len(oq.columns) != len(om.columns):
            return [Diff("colcount", f"columns: quire {len(oq.columns)} / mariadb {len(om.columns)}")]
        tdiff = [i for i, (a, b) in enumerate(zip(oq.columns, om.columns)) if a != b]
        if tdiff:
            diffs.append(Diff("types", "column types: " + ", ".join(
                f"#{i + 1} quire {oq.columns[i]} / mariadb {om.columns[i]}" for i in tdiff),
                quire_types=[oq.columns[i] for i in tdiff], mariadb_types=[om.columns[i] for i in tdiff]))
        if not rows_equal(oq.rows, om.rows, oq.columns, om.columns, ordered):
            diffs.append(Diff("rows", f"quire: {show_rows(oq.rows)}\n  mariadb: {show_rows(om.rows)}",
                              quire_types=oq.columns, mariadb_types=om.columns,
                              quire_rows=len(oq.rows), mariadb_rows=len(om.rows),
                              float_only=differ_in_floats_only(oq, om),
                              mariadb_warnings=list(om.warning_texts)))
    if (oq.warnings > 0) != (om.warnings > 0):
        diffs.append(Diff("warnings", f"warnings: quire {oq.warnings} / mariadb {om.warnings}",
                          mariadb_warnings=list(om.warning_texts)))
    return diffs


# ---------------------------------------------------------------------------
# Known differences


@dataclass
class KnownEntry:
    id: str
    reason: str
    kind: str
    sql: str = None
    quire_error: int = None
    mariadb_error: int = None
    quire_type: str = None
    mariadb_type: str = None
    warnings_on: str = None  # 'quire' / 'mariadb': the side that warned
    row_counts: list = None  # [quire, mariadb] rows returned (kind 'rows')
    float_only: bool = None  # kind 'rows': only DOUBLE values differ
    mariadb_warning: str = None  # regex one of MariaDB's warnings matches
    docs: list = field(default_factory=list)
    example: str = ""

    def matches(self, d, sql):
        kinds = self.kind if isinstance(self.kind, list) else [self.kind]
        if d.kind not in kinds or d.kind in ("normalised", "avoided"):
            return False
        if self.sql and not re.search(self.sql, sql, re.I | re.S):
            return False
        if self.quire_error is not None and self.quire_error != d.quire_error:
            return False
        if self.mariadb_error is not None and self.mariadb_error != d.mariadb_error:
            return False
        if self.quire_type is not None or self.mariadb_type is not None:
            pairs = list(zip(d.quire_types, d.mariadb_types))
            if not pairs or not all(
                    (self.quire_type is None or q == self.quire_type) and
                    (self.mariadb_type is None or m == self.mariadb_type) for q, m in pairs):
                return False
        if self.float_only and not d.float_only:
            return False
        if self.mariadb_warning is not None and not any(
                re.search(self.mariadb_warning, w) for w in d.mariadb_warnings):
            return False
        if self.row_counts is not None:
            if [d.quire_rows, d.mariadb_rows] != list(self.row_counts):
                return False
        if self.warnings_on is not None:
            m = re.search(r"warnings: quire (\d+) / mariadb (\d+)", d.detail)
            if not m:
                return False
            q, mm = int(m.group(1)), int(m.group(2))
            if self.warnings_on == "mariadb" and not (mm > 0 and q == 0):
                return False
            if self.warnings_on == "quire" and not (q > 0 and mm == 0):
                return False
        return True


class Known:
    def __init__(self, path):
        with open(path, "rb") as f:
            data = tomllib.load(f)
        self.entries = [KnownEntry(**e) for e in data.get("difference", [])]
        ids = [e.id for e in self.entries]
        if len(ids) != len(set(ids)):
            raise ValueError("duplicate ids in known differences")
        self.hits = {e.id: 0 for e in self.entries}

    def explain(self, d, sql):
        for e in self.entries:
            if e.matches(d, sql):
                return e
        if d.kind == "types" and len(d.quire_types) > 1:
            # Several columns differ: explained when each one is, perhaps
            # by different entries (SUM(GREATEST(NULL, x)), MIN(NULL)).
            first = None
            for q, m in zip(d.quire_types, d.mariadb_types):
                one = Diff("types", d.detail, quire_types=[q], mariadb_types=[m])
                e = next((e for e in self.entries if e.matches(one, sql)), None)
                if e is None:
                    return None
                first = first or e
            return first
        return None

    def render_md(self):
        """The list as Markdown (known_differences.md is this output)."""
        out = ["# Known differences: MySQL 8.0 (quire's reference) vs MariaDB 10.11", "",
               "Generated from `known_differences.toml` by `difftest.py --render-known`;",
               "edit the TOML. A difference that matches an entry is counted as explained.",
               "Matchers: `kind` (status, errcode, rows, types, warnings, affected), `sql` (a",
               "regular expression searched in the statement), the error codes and column type",
               "classes on each side.", ""]
        for e in self.entries:
            out.append(f"## `{e.id}`")
            out.append("")
            out.append(e.reason.strip())
            out.append("")
            m = ["kind=" + ("/".join(e.kind) if isinstance(e.kind, list) else e.kind)]
            for k in ("sql", "quire_error", "mariadb_error", "quire_type", "mariadb_type", "warnings_on",
                      "mariadb_warning"):
                v = getattr(e, k)
                if v is not None:
                    m.append(f"{k}={v!r}" if k in ("sql", "mariadb_warning") else f"{k}={v}")
            out.append("Matcher: " + ", ".join(f"`{x}`" for x in m))
            if e.example:
                out.append("")
                out.append(f"Example: `{e.example}`")
            for d in e.docs:
                out.append(f"- {d}")
            out.append("")
        return "\n".join(out)


# ---------------------------------------------------------------------------
# TLP and NoREC (quire alone)


def multiset(rows, classes):
    """Rows as a canonical sorted list for multiset comparison."""
    return sorted(rows, key=lambda r: sort_key(r, classes))


def tlp_where_queries(base, p, distinct=False):
    """The three partition queries of `base` (a gen.Select) on predicate p."""
    from gen import E, replace

    parts = []
    for variant in (p, E("un", "bool", "NOT", (p,)), E("post", "bool", "IS NULL", (p,))):
        parts.append(replace(base, where=list(base.where) + [variant], distinct=distinct))
    return parts


def tlp_check(kind, whole, parts, classes, agg=None):
    """Does the union of `parts` (lists of rows) equal `whole`? kind:
    'where' (multiset), 'distinct' (set), 'agg' (one row of aggregates,
    `agg` names the function per column). Returns None or a message."""
    if kind == "where":
        got = [r for p in parts for r in p]
        if rows_equal(got, whole, classes, classes, False):
            return None
        return f"Q has {len(whole)} rows, the partitions {[len(p) for p in parts]} (sum {len(got)})"
    if kind == "distinct":
        got = {tuple(r) for p in parts for r in p}
        want = {tuple(r) for r in whole}
        got_rows = sorted(got, key=lambda r: sort_key(r, classes))
        want_rows = sorted(want, key=lambda r: sort_key(r, classes))
        if rows_equal(got_rows, want_rows, classes, classes, True):
            return None
        return f"Q has {len(want)} distinct rows, the partitions' union {len(got)}"
    # aggregates: combine the partitions' single rows column by column
    combined = []
    for i, fn in enumerate(agg):
        vals = [p[0][i] for p in parts if p and p[0][i] is not None]
        if fn in ("COUNT", "COUNT(*)"):
            combined.append(str(sum(int(v) for v in vals)) if True else None)
        elif fn == "SUM":
            combined.append(str(sum(Decimal(v) for v in vals)) if vals else None)
        elif fn in ("MIN", "MAX"):
            if not vals:
                combined.append(None)
            else:
                cls = classes[i]
                key = (lambda v: Decimal(v)) if cls in ("int", "decimal") else (
                    (lambda v: float(v)) if cls == "float" else (lambda v: v))
                combined.append(min(vals, key=key) if fn == "MIN" else max(vals, key=key))
    want = whole[0] if whole else None
    if want is None:
        return "Q returned no row"
    for i, fn in enumerate(agg):
        a, b = combined[i], want[i]
        if fn == "SUM" and a is not None and b is not None:
            ok = Decimal(a) == Decimal(b) if classes[i] != "float" else math.isclose(
                float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)
        elif fn in ("COUNT", "COUNT(*)"):
            ok = int(a or 0) == int(b or 0)
        else:
            ok = cell_equal(a, b, classes[i], classes[i])
        if not ok:
            return f"column {i + 1} ({fn}): Q gives {b!r}, the partitions combine to {a!r}"
    return None
