"""Random schemas, data and queries (in the spirit of SQLancer and
go-randgen), kept as small trees so that a failing query can be shrunk.

Everything is drawn from one `random.Random`, so a seed reproduces a run.

* `gen_schema` makes 2-4 tables t0..t3 with INT/BIGINT/DECIMAL/VARCHAR/
  DATETIME/DOUBLE columns, NULL-able or not, a primary key (single or
  composite, or none) and secondary indexes.
* `gen_rows` makes rows with NULLs, duplicates, negative numbers, empty
  strings and boundary values, always valid for the column (strict mode
  must not reject them on either server; invalid inserts are generated
  separately, one row per statement, so their errors are compared too).
* `QueryGen` makes SELECTs: one table or joins (comma, INNER, LEFT, RIGHT,
  CROSS with ON), WHERE with AND/OR/NOT/IS NULL/IN/BETWEEN/LIKE and
  comparisons of mixed types, GROUP BY with COUNT/SUM/MIN/MAX/AVG, HAVING,
  DISTINCT, ORDER BY ... LIMIT, arithmetic, CASE, COALESCE/IFNULL, and
  behind feature flags subqueries, derived tables, UNION, CTEs and window
  functions.

Queries never depend on unspecified behaviour: grouped queries select only
grouped columns and aggregates (ONLY_FULL_GROUP_BY holds on both
servers), LIMIT comes only with an ORDER BY over every output column, and
nothing non-deterministic (RAND, NOW) is generated.

## Trees
`E` is an expression node: `kind` says how it renders, `ty` is the type
class of its value (int, dec, dbl, str, dt, bool), `kids` its operands.
`Select` is one query block, `SetOp` a UNION, `With` a CTE around a query.
`shrinks(tree)` yields smaller variants of a tree, used by the minimiser:
a node replaced by one of its operands of the same type, a literal made
simpler, a list item dropped, a clause dropped.
"""

import copy
from decimal import ROUND_DOWN, Decimal, InvalidOperation
from dataclasses import dataclass, field, replace
from typing import Optional

# ---------------------------------------------------------------------------
# Feature flags

ALL_FEATURES = [
    "join",        # joins of 2-3 tables: comma, INNER, LEFT, CROSS
    "comma_on_scope",  # ON conditions that name a table before a comma (an error in MySQL: ',' binds looser than JOIN)
    "right_join",  # RIGHT JOIN
    "self_join",   # a table joined with itself
    "where",       # WHERE clauses
    "mixed_cmp",   # comparisons across types (int vs string, decimal vs double ...)
    "nullsafe",    # the NULL-safe equality <=>
    "dt_mixed_cmp",  # a DATETIME compared with a number or a string that is no datetime
    "str_num_cmp",   # a string compared with a number (compared as DOUBLEs in MySQL)
    "like",        # LIKE / NOT LIKE
    "in_list",     # IN (...) / NOT IN (...)
    "in_mixed",    # IN lists whose values have another type than the operand (1.5 or '' for an INT)
    "between",     # BETWEEN / NOT BETWEEN
    "arith",       # + - * / DIV % and unary minus
    "nested_division",  # '/' inside other arithmetic or aggregates (intermediate DECIMAL precision)
    "neg_const",   # unary minus over a constant integer expression (typed DECIMAL by MySQL)
    "neg_zero",    # DOUBLE * / and unary minus, which can make -0 (equal to 0 in DISTINCT/GROUP BY)
    "case",        # CASE WHEN
    "coalesce",    # COALESCE / IFNULL / NULLIF
    "functions",   # ABS, SIGN, LENGTH, CHAR_LENGTH, CONCAT, SUBSTRING, TRIM, REPLACE, GREATEST, LEAST
    "round",       # ROUND, TRUNCATE, FLOOR, CEIL
    "case_fold",   # UPPER, LOWER
    "int_overflow",  # BIGINT/INT boundary values and big literals: arithmetic that overflows (error 1690)
    "groupby",     # GROUP BY and aggregates
    "having",      # HAVING
    "fgb_violation",  # ONLY_FULL_GROUP_BY violations (a non-grouped column beside GROUP BY or aggregates): error 1055/1140/1054
    "agg_distinct",  # COUNT(DISTINCT ...), SUM(DISTINCT ...)
    "distinct",    # SELECT DISTINCT
    "orderby",     # ORDER BY
    "limit",       # LIMIT / OFFSET (with a total ORDER BY)
    "padspace",    # data with trailing spaces (PAD SPACE collation semantics)
    "null_item",   # select-list items that are a bare NULL (or only NULL literals): type NULL
    "null_operand",  # NULL literals as operands inside select-list values (their result types)
    "dt_string_mix",  # select-list values mixing a DATETIME column with a datetime string literal
    "dml_strict",  # UPDATE/DELETE whose WHERE/SET may warn (mixed types, arithmetic): an error in strict mode
    "float_extremes",  # DOUBLEs like 1e300 and 0.1 whose sums depend on the order rows are added in
    "dec_scale_cmp",  # col = literal with more fraction digits than the INT/DECIMAL column (MariaDB index bug)
    "bad_insert",  # inserts that must fail (NULL into NOT NULL, duplicate keys, out of range)
    "dml",         # UPDATE / DELETE statements between queries
    "subquery",    # IN/NOT IN/EXISTS/scalar/correlated subqueries
    "derived",     # derived tables in FROM
    "union",       # UNION / UNION ALL
    "cte",         # WITH ... (common table expressions)
    "window",      # window functions
]

# What `--features` defaults to: everything but float_extremes (a SUM or
# AVG over 1e300, -1e300 and 0.1 depends on the order the rows are added
# in, on any server: no oracle can judge it) and dec_scale_cmp (MariaDB
# answers `dec_5_0_col = -0.10` through its index as if it were 0: a
# MariaDB bug, see known_differences.toml). Unsupported constructs are
# counted per feature, not failed.
DEFAULT_FEATURES = [f for f in ALL_FEATURES if f not in ("float_extremes", "dec_scale_cmp")]


# ---------------------------------------------------------------------------
# Schema


@dataclass
class Column:
    name: str
    sqltype: str  # as written in CREATE TABLE
    ty: str  # int, dec, dbl, str, dt
    nullable: bool
    # value range facts used by the data generator
    lo: int = 0
    hi: int = 0
    length: int = 0  # VARCHAR length
    prec: int = 0
    scale: int = 0


@dataclass
class Table:
    name: str
    columns: list
    pk: list  # column names
    indexes: list  # (name, [cols], unique)

    def ddl(self):
        parts = []
        for c in self.columns:
            parts.append(f"{c.name} {c.sqltype}{'' if c.nullable else ' NOT NULL'}")
        if self.pk:
            parts.append(f"PRIMARY KEY ({', '.join(self.pk)})")
        for name, cols, unique in self.indexes:
            parts.append(f"{'UNIQUE ' if unique else ''}KEY {name} ({', '.join(cols)})")
        return f"CREATE TABLE {self.name} ({', '.join(parts)})"

    def col(self, name):
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)


INT_BOUNDS = {"INT": (-2147483648, 2147483647), "BIGINT": (-9223372036854775808, 9223372036854775807)}


def gen_column(rng, name, force_not_null=False):
    kind = rng.choice(["INT", "INT", "BIGINT", "DECIMAL", "VARCHAR", "VARCHAR", "DATETIME", "DOUBLE"])
    nullable = not force_not_null and rng.random() < 0.6
    if kind in INT_BOUNDS:
        lo, hi = INT_BOUNDS[kind]
        return Column(name, kind, "int", nullable, lo=lo, hi=hi)
    if kind == "DECIMAL":
        prec, scale = rng.choice([(10, 2), (5, 0), (12, 4), (20, 6), (8, 3)])
        return Column(name, f"DECIMAL({prec},{scale})", "dec", nullable, prec=prec, scale=scale)
    if kind == "VARCHAR":
        n = rng.choice([1, 5, 10, 20, 40])
        return Column(name, f"VARCHAR({n})", "str", nullable, length=n)
    if kind == "DATETIME":
        return Column(name, "DATETIME", "dt", nullable)
    return Column(name, "DOUBLE", "dbl", nullable)


def gen_schema(rng, ntables=None):
    ntables = ntables or rng.randint(2, 4)
    tables = []
    for ti in range(ntables):
        ncols = rng.randint(2, 5)
        cols = []
        pk_kind = rng.choice(["int", "int", "composite", "none", "any"])
        for ci in range(ncols):
            cols.append(gen_column(rng, f"c{ci}"))
        pk = []
        if pk_kind == "int":
            lo, hi = INT_BOUNDS["INT"]
            cols[0] = Column("c0", "INT", "int", False, lo=lo, hi=hi)
            pk = ["c0"]
        elif pk_kind == "composite" and ncols >= 2:
            for i in (0, 1):
                c = cols[i]
                c.nullable = False
                # a VARCHAR in a key stays short
            pk = ["c0", "c1"]
        elif pk_kind == "any":
            cols[0].nullable = False
            pk = ["c0"]
        indexes = []
        for k in range(rng.randint(0, 2)):
            cs = rng.sample([c.name for c in cols], rng.randint(1, min(2, ncols)))
            unique = rng.random() < 0.2
            indexes.append((f"i{k}", cs, unique))
        tables.append(Table(f"t{ti}", cols, pk, indexes))
    return tables


# ---------------------------------------------------------------------------
# Values

STR_POOL = ["", "a", "A", "b", "B", "abc", "ABC", "aBc", "a%b", "a_b", "_", "%", "10", "-1",
            "1e2", "0", "1.5", "x", "xyz", "hello", "Hello", "zz", "é", "Ä", "ß", "ab\\c",
            "it's", "0x1F", "-0", "9"]
# Strings with leading or trailing spaces: under a PAD SPACE collation
# (MySQL's utf8mb4_bin) 'a' = 'a ', and a prefix of ' a' is ' '.
PAD_STRS = ["a ", " a", "ab  ", "x ", "  9"]
DT_POOL = ["2000-01-01 00:00:00", "1999-12-31 23:59:59", "2024-02-29 12:34:56",
           "1000-01-01 00:00:00", "9999-12-31 23:59:59", "1970-01-01 00:00:01",
           "2038-01-19 03:14:07", "2020-06-15 08:00:00", "2020-06-15 08:00:01",
           "2001-02-03 04:05:06"]
# Dyadic values (k / 2^n) of moderate size: sums of them are exact in any
# order, so SUM/AVG over DOUBLE columns do not depend on the plan.
DBL_POOL = ["0", "1", "-1", "0.5", "-2.25", "0.125", "1e10", "-1e10", "123456789.125", "2.5",
            "100", "-0.375", "1048576.5"]
DBL_EXTREME = ["1e300", "-1e300", "0.1", "3.141592653589793", "1.5e-7", "1.7976931348623157e308"]


def sql_str(s):
    return "'" + s.replace("\\", "\\\\").replace("'", "''") + "'"


def value_for(rng, col, features, null_ok=True):
    """A literal (SQL text) valid for `col`."""
    if col.nullable and null_ok and rng.random() < 0.15:
        return "NULL"
    r = rng.random()
    if col.ty == "int":
        if r < 0.1 and "int_overflow" in features:
            return str(rng.choice([col.lo, col.hi, col.lo + 1, col.hi - 1]))
        if r < 0.7:
            return str(rng.randint(-5, 10))
        return str(rng.randint(-1000, 1000))
    if col.ty == "dec":
        maxint = 10 ** (col.prec - col.scale) - 1
        if r < 0.1:
            whole = rng.choice([maxint, -maxint])
            frac = "9" * col.scale
            return f"{whole}.{frac}" if col.scale else str(whole)
        whole = rng.randint(-5, 10) if r < 0.7 else rng.randint(-min(maxint, 10**6), min(maxint, 10**6))
        if col.scale:
            frac = "".join(rng.choice("0123456789") for _ in range(rng.randint(0, col.scale)))
            return f"{whole}.{frac}" if frac else str(whole)
        return str(whole)
    if col.ty == "dbl":
        if "float_extremes" in features and r < 0.15:
            return rng.choice(DBL_EXTREME)
        if r < 0.7:
            return rng.choice(DBL_POOL)
        return repr(rng.randint(-8000, 8000) / 8)
    if col.ty == "str":
        pool = STR_POOL + (PAD_STRS if "padspace" in features else [])
        s = rng.choice(pool)[: col.length]
        if "padspace" not in features:
            s = s.strip(" ")
        return sql_str(s)
    if col.ty == "dt":
        return sql_str(rng.choice(DT_POOL))
    raise ValueError(col.ty)


def gen_rows(rng, table, features, n):
    """n valid rows (tuples of SQL literals), primary keys unique, some
    non-key duplicates (a row copied with only the key changed)."""
    rows, keys = [], set()
    pk_idx = [i for i, c in enumerate(table.columns) if c.name in table.pk]
    uniq = [[i for i, c in enumerate(table.columns) if c.name in cols]
            for _, cols, u in table.indexes if u]
    useen = [set() for _ in uniq]
    attempts = 0
    while len(rows) < n and attempts < n * 20:
        attempts += 1
        if rows and rng.random() < 0.2:
            row = list(rng.choice(rows))  # a duplicate of the non-key values
            for i in pk_idx:
                row[i] = value_for(rng, table.columns[i], features, null_ok=False)
        else:
            row = [value_for(rng, c, features) for c in table.columns]
        key = tuple(_norm_key(row[i], table.columns[i]) for i in pk_idx)
        if pk_idx and key in keys:
            continue
        ukeys = []
        ok = True
        for j, idx in enumerate(uniq):
            uk = tuple(_norm_key(row[i], table.columns[i]) for i in idx)
            if "NULL" not in [row[i] for i in idx] and uk in useen[j]:
                ok = False
            ukeys.append(uk)
        if not ok:
            continue
        if pk_idx:
            keys.add(key)
        for j, uk in enumerate(ukeys):
            useen[j].add(uk)
        rows.append(tuple(row))
    return rows


def _norm_key(lit, col):
    """Literal -> the value the key compares as (so '1.50' and '1.5' collide,
    and 'a' and 'a ' under PAD SPACE)."""
    if lit == "NULL":
        return None
    if col.ty in ("int", "dec", "dbl"):
        try:
            from decimal import Decimal

            return Decimal(lit).normalize() if col.ty != "dbl" else float(lit)
        except Exception:
            return lit
    if col.ty == "str":
        return lit.rstrip("' ")  # PAD SPACE: trailing spaces do not count
    return lit


def insert_sql(table, rows):
    vals = ", ".join("(" + ", ".join(r) + ")" for r in rows)
    return f"INSERT INTO {table.name} VALUES {vals}"


def bad_inserts(rng, table, rows, features):
    """Statements that must fail identically on both servers."""
    out = []
    for c in table.columns:
        if not c.nullable and rng.random() < 0.5:
            row = [value_for(rng, x, features, null_ok=False) for x in table.columns]
            row[table.columns.index(c)] = "NULL"
            out.append(f"INSERT INTO {table.name} VALUES ({', '.join(row)})")
        if c.ty == "int" and rng.random() < 0.3:
            row = [value_for(rng, x, features, null_ok=False) for x in table.columns]
            row[table.columns.index(c)] = str(c.hi + 1)
            out.append(f"INSERT INTO {table.name} VALUES ({', '.join(row)})")
        if c.ty == "str" and rng.random() < 0.3:
            row = [value_for(rng, x, features, null_ok=False) for x in table.columns]
            row[table.columns.index(c)] = sql_str("y" * (c.length + 1))
            out.append(f"INSERT INTO {table.name} VALUES ({', '.join(row)})")
    if table.pk and rows:
        out.append(insert_sql(table, [rng.choice(rows)]))  # duplicate key
    return out


# ---------------------------------------------------------------------------
# Expression trees


@dataclass
class E:
    kind: str  # lit col bin un post fn agg case in between like subq raw win
    ty: str  # int dec dbl str dt bool any
    text: str = ""  # literal text, column ref, operator, function name
    kids: tuple = ()
    neg: bool = False  # NOT IN / NOT BETWEEN / NOT LIKE, DISTINCT for aggregates
    sub: object = None  # a Select for subqueries
    over: str = ""  # window specification

    def sql(self):
        k = self.kind
        if k in ("lit", "col", "raw"):
            return self.text
        if k == "bin":
            a, b = self.kids
            return f"({a.sql()} {self.text} {b.sql()})"
        if k == "un":
            return f"({self.text} {self.kids[0].sql()})"
        if k == "post":
            return f"({self.kids[0].sql()} {self.text})"
        if k == "fn":
            return f"{self.text}({', '.join(x.sql() for x in self.kids)})"
        if k == "agg":
            if not self.kids:
                return f"{self.text}(*)"
            return f"{self.text}({'DISTINCT ' if self.neg else ''}{self.kids[0].sql()})"
        if k == "win":
            inner = f"{self.text}({', '.join(x.sql() for x in self.kids)})"
            return f"{inner} OVER ({self.over})"
        if k == "case":
            ks = self.kids
            parts = ["CASE"]
            n = len(ks) - 1
            for i in range(0, n, 2):
                parts.append(f"WHEN {ks[i].sql()} THEN {ks[i + 1].sql()}")
            parts.append(f"ELSE {ks[-1].sql()} END")
            return " ".join(parts)
        if k == "in":
            if self.sub is not None:
                return f"({self.kids[0].sql()} {'NOT ' if self.neg else ''}IN ({self.sub.sql()}))"
            return f"({self.kids[0].sql()} {'NOT ' if self.neg else ''}IN ({', '.join(x.sql() for x in self.kids[1:])}))"
        if k == "between":
            a, lo, hi = self.kids
            return f"({a.sql()} {'NOT ' if self.neg else ''}BETWEEN {lo.sql()} AND {hi.sql()})"
        if k == "like":
            a, p = self.kids
            return f"({a.sql()} {'NOT ' if self.neg else ''}LIKE {p.sql()})"
        if k == "subq":  # EXISTS / scalar
            if self.text == "EXISTS":
                return f"({'NOT ' if self.neg else ''}EXISTS ({self.sub.sql()}))"
            return f"({self.sub.sql()})"
        raise ValueError(k)


def all_null(e):
    """True for NULL or an expression over NULL literals only (its type is
    NULL in MySQL's result metadata)."""
    if e.kind == "lit":
        return e.text == "NULL"
    if e.kind in ("col", "agg", "win", "subq", "raw") or e.sub is not None:
        return False
    return bool(e.kids) and all(all_null(k) for k in e.kids)


def is_const(e):
    """No column, aggregate, window or subquery anywhere in e."""
    if e.kind in ("col", "agg", "win", "subq") or e.sub is not None:
        return False
    return all(is_const(k) for k in e.kids)


def lit(text, ty):
    return E("lit", ty, text)


SIMPLE_LITS = {"int": ["0", "1", "NULL"], "dec": ["0", "1.5", "NULL"], "dbl": ["0", "1", "NULL"],
               "str": ["''", "'a'", "NULL"], "dt": ["'2000-01-01 00:00:00'", "NULL"],
               "bool": ["TRUE", "FALSE", "NULL"], "any": ["0", "NULL"]}


def expr_shrinks(e):
    """Simpler expressions to try in place of `e` (outermost first)."""
    # an operand standing in for the whole node
    for k in e.kids:
        if k.ty == e.ty or (e.ty in NUMERIC and k.ty in NUMERIC):
            yield k
    if e.kind == "lit" and e.text not in SIMPLE_LITS.get(e.ty, []):
        for t in SIMPLE_LITS.get(e.ty, []):
            yield lit(t, e.ty)
    if e.kind not in ("lit", "col", "agg", "win") and e.ty in SIMPLE_LITS:
        yield lit(SIMPLE_LITS[e.ty][0], e.ty)
    if e.neg and e.kind in ("in", "between", "like", "subq"):
        yield replace(e, neg=False)
    if e.kind == "in" and e.sub is None and len(e.kids) > 2:
        for i in range(1, len(e.kids)):
            yield replace(e, kids=e.kids[:i] + e.kids[i + 1:])
    if e.kind == "case" and len(e.kids) > 3:
        yield replace(e, kids=e.kids[2:])
    if e.sub is not None:
        for s in select_shrinks(e.sub):
            yield replace(e, sub=s)
    # recurse into operands
    for i, k in enumerate(e.kids):
        for s in expr_shrinks(k):
            yield replace(e, kids=e.kids[:i] + (s,) + e.kids[i + 1:])


NUMERIC = ("int", "dec", "dbl")


# ---------------------------------------------------------------------------
# Query blocks


@dataclass
class FromItem:
    table: str  # table name, or "" for a derived table
    alias: str
    join: str = ""  # "" (first), ",", "JOIN", "LEFT JOIN", "RIGHT JOIN", "CROSS JOIN"
    on: Optional[E] = None
    derived: object = None  # Select for derived tables
    cte: bool = False

    def sql(self):
        if self.derived is not None:
            src = f"({self.derived.sql()}) AS {self.alias}"
        else:
            src = f"{self.table} AS {self.alias}"
        if not self.join:
            return src
        if self.join == ",":
            return f", {src}"
        on = f" ON {self.on.sql()}" if self.on is not None else ""
        return f" {self.join} {src}{on}"


@dataclass
class Select:
    items: list  # E
    from_: list  # FromItem
    where: list = field(default_factory=list)  # AND-ed conjuncts
    group_by: list = field(default_factory=list)
    having: Optional[E] = None
    distinct: bool = False
    order_by: list = field(default_factory=list)  # (E or int position, desc)
    limit: Optional[int] = None
    offset: Optional[int] = None
    features: set = field(default_factory=set)

    def sql(self):
        s = "SELECT " + ("DISTINCT " if self.distinct else "")
        s += ", ".join(f"{e.sql()} AS r{i}" for i, e in enumerate(self.items))
        if self.from_:
            s += " FROM " + "".join(f.sql() for f in self.from_)
        if self.where:
            s += " WHERE " + " AND ".join(w.sql() for w in self.where)
        if self.group_by:
            s += " GROUP BY " + ", ".join(g.sql() for g in self.group_by)
        if self.having is not None:
            s += " HAVING " + self.having.sql()
        if self.order_by:
            s += " ORDER BY " + ", ".join(
                (str(o) if isinstance(o, int) else o.sql()) + (" DESC" if d else "") for o, d in self.order_by)
        if self.limit is not None:
            s += f" LIMIT {self.limit}"
            if self.offset is not None:
                s += f" OFFSET {self.offset}"
        return s

    def total_order(self):
        """True when ORDER BY fixes the order of the output completely
        (every output column is a key, by position)."""
        pos = {o for o, _ in self.order_by if isinstance(o, int)}
        return bool(self.order_by) and pos >= set(range(1, len(self.items) + 1))


@dataclass
class SetOp:
    op: str  # UNION / UNION ALL
    left: object
    right: object
    features: set = field(default_factory=set)

    def sql(self):
        return f"{self.left.sql()} {self.op} {self.right.sql()}"

    def total_order(self):
        return False


@dataclass
class With:
    ctes: list  # (name, Select)
    body: object
    features: set = field(default_factory=set)

    def sql(self):
        return "WITH " + ", ".join(f"{n} AS ({q.sql()})" for n, q in self.ctes) + " " + self.body.sql()

    def total_order(self):
        return self.body.total_order()


def select_shrinks(q):
    """Smaller variants of a query (each a new object; `q` is untouched)."""
    if isinstance(q, SetOp):
        yield q.left
        yield q.right
        for s in select_shrinks(q.left):
            yield replace(q, left=s)
        for s in select_shrinks(q.right):
            yield replace(q, right=s)
        return
    if isinstance(q, With):
        for s in select_shrinks(q.body):
            yield replace(q, body=s)
        for i, (n, c) in enumerate(q.ctes):
            for s in select_shrinks(c):
                ctes = list(q.ctes)
                ctes[i] = (n, s)
                yield replace(q, ctes=ctes)
        return
    # clauses dropped whole
    if q.limit is not None:
        yield replace(q, limit=None, offset=None)
    if q.offset is not None:
        yield replace(q, offset=None)
    if q.order_by and q.limit is None:
        yield replace(q, order_by=[])
    if q.having is not None:
        yield replace(q, having=None)
    if q.distinct:
        yield replace(q, distinct=False)
    if len(q.where) > 0:
        for i in range(len(q.where)):
            yield replace(q, where=q.where[:i] + q.where[i + 1:])
    # joins: drop a joined source; make an outer join inner, a join a comma
    for i in range(1, len(q.from_)):
        yield replace(q, from_=q.from_[:i] + q.from_[i + 1:])
    for i, f in enumerate(q.from_):
        if f.join in ("LEFT JOIN", "RIGHT JOIN"):
            nf = list(q.from_)
            nf[i] = replace(f, join="JOIN")
            yield replace(q, from_=nf)
        if f.on is not None:
            for s in expr_shrinks(f.on):
                nf = list(q.from_)
                nf[i] = replace(f, on=s)
                yield replace(q, from_=nf)
        if f.derived is not None:
            for s in select_shrinks(f.derived):
                nf = list(q.from_)
                nf[i] = replace(f, derived=s)
                yield replace(q, from_=nf)
    # select-list items (positions in ORDER BY are renumbered)
    if len(q.items) > 1:
        for i in range(len(q.items)):
            ob = []
            for o, d in q.order_by:
                if isinstance(o, int):
                    if o == i + 1:
                        continue
                    ob.append((o - 1 if o > i + 1 else o, d))
                else:
                    ob.append((o, d))
            yield replace(q, items=q.items[:i] + q.items[i + 1:], order_by=ob)
    for i in range(len(q.group_by)):
        if len(q.group_by) > 1:
            yield replace(q, group_by=q.group_by[:i] + q.group_by[i + 1:])
    for i, o in enumerate(q.order_by):
        if len(q.order_by) > 1 and q.limit is None:
            yield replace(q, order_by=q.order_by[:i] + q.order_by[i + 1:])
    if q.limit is not None and q.limit > 1:
        yield replace(q, limit=1)
    # expressions simplified in place
    for i, e in enumerate(q.items):
        for s in expr_shrinks(e):
            yield replace(q, items=q.items[:i] + [s] + q.items[i + 1:])
    for i, e in enumerate(q.where):
        for s in expr_shrinks(e):
            if s.ty == "bool" or s.kind == "lit":
                yield replace(q, where=q.where[:i] + [s] + q.where[i + 1:])
    if q.having is not None:
        for s in expr_shrinks(q.having):
            yield replace(q, having=s)


def tables_used(q):
    """Base table names a query reads (for dropping unused tables)."""
    out = set()

    def walk_e(e):
        if e is None:
            return
        if e.sub is not None:
            walk_q(e.sub)
        for k in e.kids:
            walk_e(k)

    def walk_q(x):
        if isinstance(x, SetOp):
            walk_q(x.left)
            walk_q(x.right)
            return
        if isinstance(x, With):
            for _, c in x.ctes:
                walk_q(c)
            walk_q(x.body)
            return
        for f in x.from_:
            if f.derived is not None:
                walk_q(f.derived)
            elif not f.cte:
                out.add(f.table)
            walk_e(f.on)
        for e in x.items + x.where + x.group_by:
            walk_e(e)
        walk_e(x.having)
        for o, _ in x.order_by:
            if not isinstance(o, int):
                walk_e(o)

    walk_q(q)
    return out


# ---------------------------------------------------------------------------
# The query generator


class QueryGen:
    """Makes random queries over a schema. `features` is a set of names
    from ALL_FEATURES; a query's `features` records what it used (for the
    per-feature unsupported bucket)."""

    def __init__(self, rng, tables, features):
        self.rng = rng
        self.tables = tables
        self.f = set(features)
        self.used = set()  # features used by the query being built
        self.scope = []  # columns visible: (alias, Column)
        self.outer = []  # columns of the enclosing query (correlation)
        self.depth = 0
        self.in_item = False  # building a select-list value (its result type is compared)
        self.in_agg = False  # building an aggregate's argument

    # -- helpers
    def on(self, feat, p=0.5):
        """Random choice gated by a feature flag; records the use."""
        if feat in self.f and self.rng.random() < p:
            self.used.add(feat)
            return True
        return False

    def cols(self, ty=None, scope=None):
        sc = self.scope if scope is None else scope
        return [(a, c) for a, c in sc if ty is None or c.ty == ty or (ty == "num" and c.ty in NUMERIC)]

    def colref(self, a, c):
        return E("col", c.ty, f"{a}.{c.name}")

    def num_scale(self, e):
        """Fraction digits an INT/DECIMAL column reference can hold, else None."""
        if e.kind != "col":
            return None
        for a, c in self.scope + self.outer:
            if f"{a}.{c.name}" == e.text:
                return 0 if c.ty == "int" else (c.scale if c.ty == "dec" else None)
        return None

    def fit(self, col, v):
        """Without dec_scale_cmp: a numeric literal compared for equality with
        an INT/DECIMAL column gets no more fraction digits than the column
        has (MariaDB's index lookup rounds it and finds the rounded value;
        see known_differences.toml, mariadb-decimal-index-rounds-constant)."""
        scale = self.num_scale(col)
        if scale is None or v.kind != "lit" or v.ty not in NUMERIC or "dec_scale_cmp" in self.f:
            return v
        try:
            d = Decimal(v.text)
        except InvalidOperation:
            return v
        if not d.is_finite() or abs(d) > 10**15 or -d.as_tuple().exponent <= scale:
            return v
        q = d.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_DOWN)
        return lit(format(q, "f"), "dec" if scale else "int")

    def fit_in(self, col, v):
        """An IN-list value for `col`: fitted (see fit) and, without in_mixed,
        within the column's range (a value the key cannot hold makes quire
        return another value's rows twice: F-14)."""
        v = self.fit(col, v)
        c = next((c for a, c in self.scope + self.outer if f"{a}.{c.name}" == col.text), None) \
            if col.kind == "col" else None
        if c is None or "in_mixed" in self.f or v.kind != "lit" or c.ty not in ("int", "dec"):
            return v
        try:
            d = Decimal(v.text)
        except InvalidOperation:
            return v
        if c.ty == "int" and c.hi:
            ok = c.lo <= d <= c.hi
        elif c.ty == "dec" and c.prec:
            ok = abs(d) < Decimal(10) ** (c.prec - c.scale)
        else:
            return v
        return v if ok else lit("3", "int")

    def col_of(self, e):
        """The Column a column reference names (None for derived columns)."""
        for a, c in self.scope + self.outer:
            if f"{a}.{c.name}" == e.text:
                return c if c.length else None
        return None

    # -- literals
    def literal(self, ty):
        r = self.rng
        if r.random() < 0.08 and (not self.in_item or "null_operand" in self.f):
            if self.in_item:
                self.used.add("null_operand")
            return lit("NULL", ty)
        if ty == "int":
            pool = [0, 1, -1, 2, 3, 5, 10, -5, 100, r.randint(-20, 20)]
            if "int_overflow" in self.f:
                pool += [2147483647, -2147483648, 9223372036854775807]
            return lit(str(r.choice(pool)), "int")
        if ty == "dec":
            pool = ["0.5", "1.50", "-2.25", "0.001", "99999999.99", "3.0", "-0.10"]
            return lit(r.choice(pool), "dec")
        if ty == "dbl":
            # dyadic, like the DOUBLE data (sums exact in any order)
            pool = ["1e2", "0.5e0", "-1.5e1", "2.5E-1", "1.25e1"]
            if "float_extremes" in self.f:
                pool += ["1e300", "3.14e0", "1e-1", "2.5E-3"]
            return lit(r.choice(pool), "dbl")
        if ty == "str":
            pool = STR_POOL + (PAD_STRS if "padspace" in self.f else [])
            return lit(sql_str(r.choice(pool)), "str")
        if ty == "dt":
            return lit(sql_str(r.choice(DT_POOL)), "dt")
        if ty == "bool":
            return lit(r.choice(["TRUE", "FALSE"]), "bool")
        return lit("NULL", ty)

    # -- typed expressions
    def expr(self, ty, depth=0, allow_agg=False):
        """A value expression of type class `ty` (int, dec, dbl, str, dt)."""
        r = self.rng
        if ty == "num":
            ty = r.choice(NUMERIC)
        if ty == "bool":
            return self.pred(depth)
        leaf = depth >= 2 or r.random() < 0.45
        cols = self.cols(ty)
        if ty == "dt" and self.in_item and cols and "dt_string_mix" not in self.f:
            # a datetime string literal beside a DATETIME column would make the
            # value a string (MySQL's type aggregation): columns only
            return self.colref(*r.choice(cols))
        if ty == "dt" and self.in_item and cols:
            self.used.add("dt_string_mix")
        if leaf:
            if cols and r.random() < 0.75:
                return self.colref(*r.choice(cols))
            if self.outer and r.random() < 0.3:
                oc = [x for x in self.outer if x[1].ty == ty]
                if oc:
                    return self.colref(*r.choice(oc))
            return self.literal(ty)
        choices = []
        if ty in NUMERIC and "arith" in self.f:
            choices += ["arith"] * 3
        if "case" in self.f:
            choices.append("case")
        if "coalesce" in self.f:
            choices.append("coalesce")
        if self.f & {"functions", "round", "case_fold"}:
            choices.append("func")
        if "subquery" in self.f and self.depth == 0:
            choices.append("scalar")
        if not choices:
            return self.expr(ty, 99)
        c = r.choice(choices)
        if c == "arith":
            self.used.add("arith")
            # DOUBLE arithmetic that can make -0 only with neg_zero; then
            # operands keep the expression's type (a DECIMAL times a DOUBLE is a DOUBLE)
            nz = "neg_zero" in self.f
            if r.random() < 0.15 and (ty != "dbl" or nz):
                a = self.expr(ty, depth + 1)
                if ty == "int" and is_const(a):
                    if "neg_const" not in self.f:
                        return a
                    self.used.add("neg_const")
                if ty == "dbl":
                    self.used.add("neg_zero")
                return E("un", ty, "-", (a,))
            # '/' only where its DECIMAL result is not used by more
            # arithmetic (unless nested_division)
            div = ty != "int" and (("nested_division" in self.f) or (depth == 0 and not self.in_agg))
            if div and (depth > 0 or self.in_agg):
                self.used.add("nested_division")
            ops = ["+", "-", "+", "-"]
            if ty == "int":
                ops += ["*", "DIV", "%"]
            elif ty == "dec" or nz:
                ops += ["*"] + (["/"] if div else [])
            op = r.choice(ops)
            other = (lambda: r.choice(NUMERIC)) if nz else (lambda: ty)
            if ty == "dbl" and op in ("*", "/"):
                self.used.add("neg_zero")
            if ty == "int" and op not in ("DIV", "%"):
                return E("bin", "int", op, (self.expr("int", depth + 1), self.expr("int", depth + 1)))
            if op == "/":
                return E("bin", "dec" if ty == "dec" else ty, op,
                         (self.expr(other(), depth + 1), self.expr(other(), depth + 1)))
            if op in ("DIV", "%"):
                return E("bin", "int", op, (self.expr("int", depth + 1), self.expr("int", depth + 1)))
            return E("bin", ty, op, (self.expr(ty, depth + 1), self.expr(other(), depth + 1)))
        if c == "case":
            self.used.add("case")
            kids = []
            for _ in range(r.randint(1, 2)):
                kids += [self.pred(depth + 1), self.expr(ty, depth + 1)]
            kids.append(self.expr(ty, depth + 1))
            return E("case", ty, "", tuple(kids))
        if c == "coalesce":
            self.used.add("coalesce")
            fn = r.choice(["COALESCE", "IFNULL", "NULLIF"])
            n = r.randint(2, 3) if fn == "COALESCE" else 2
            return E("fn", ty, fn, tuple(self.expr(ty, depth + 1) for _ in range(n)))
        if c == "scalar":
            self.used.add("subquery")
            sub = self.subselect(ty, scalar=True)
            return E("subq", ty, "SCALAR", sub=sub)
        if ty == "int":
            fn = r.choice(["ABS", "LENGTH", "SIGN", "GREATEST", "LEAST", "CHAR_LENGTH"])
            self.used.add("functions")
            if fn in ("LENGTH", "CHAR_LENGTH"):
                return E("fn", "int", fn, (self.expr("str", depth + 1),))
            if fn in ("GREATEST", "LEAST"):
                return E("fn", "int", fn, (self.expr("int", depth + 1), self.expr("int", depth + 1)))
            return E("fn", "int", fn, (self.expr("int", depth + 1),))
        if ty in ("dec", "dbl"):
            fns = ["ABS", "ABS"] + (["ROUND", "FLOOR", "CEIL", "TRUNCATE"] if "round" in self.f else [])
            fn = r.choice(fns)
            self.used.add("functions" if fn == "ABS" else "round")
            if fn == "ROUND" and r.random() < 0.5:
                return E("fn", ty, fn, (self.expr(ty, depth + 1), lit(str(r.randint(0, 3)), "int")))
            if fn == "TRUNCATE":
                return E("fn", ty, fn, (self.expr(ty, depth + 1), lit(str(r.randint(0, 3)), "int")))
            return E("fn", ty, fn, (self.expr(ty, depth + 1),))
        if ty == "str":
            fns = ["CONCAT", "SUBSTRING", "TRIM", "REPLACE"] + (["UPPER", "LOWER"] if "case_fold" in self.f else [])
            fn = r.choice(fns)
            self.used.add("case_fold" if fn in ("UPPER", "LOWER") else "functions")
            if fn == "CONCAT":
                return E("fn", "str", fn, (self.expr("str", depth + 1), self.expr("str", depth + 1)))
            if fn == "SUBSTRING":
                return E("fn", "str", fn, (self.expr("str", depth + 1), lit(str(r.randint(1, 3)), "int"),
                                           lit(str(r.randint(0, 3)), "int")))
            if fn == "REPLACE":
                return E("fn", "str", fn, (self.expr("str", depth + 1), self.literal("str"), self.literal("str")))
            return E("fn", "str", fn, (self.expr("str", depth + 1),))
        return self.expr(ty, 99)

    def pred(self, depth=0):
        """A boolean expression (may be NULL). Its operands' types do not
        reach the result type (always an integer 0/1/NULL)."""
        saved, self.in_item = self.in_item, False
        try:
            return self._pred(depth)
        finally:
            self.in_item = saved

    def _pred(self, depth=0):
        r = self.rng
        if depth < 2 and r.random() < 0.3:
            k = r.random()
            if k < 0.4:
                return E("bin", "bool", "AND", (self.pred(depth + 1), self.pred(depth + 1)))
            if k < 0.8:
                return E("bin", "bool", "OR", (self.pred(depth + 1), self.pred(depth + 1)))
            if k < 0.9:
                return E("bin", "bool", "XOR", (self.pred(depth + 1), self.pred(depth + 1)))
            return E("un", "bool", "NOT", (self.pred(depth + 1),))
        kinds = ["cmp"] * 5 + ["isnull"] * 2 + ["truth"]
        if "in_list" in self.f:
            kinds += ["in"] * 2
        if "between" in self.f:
            kinds += ["between"] * 2
        if "like" in self.f and self.cols("str"):
            kinds += ["like"] * 2
        if "subquery" in self.f and self.depth == 0:
            kinds += ["in_sub", "exists"]
        k = r.choice(kinds)
        if k == "cmp":
            ty = self.any_ty()
            op = r.choice(["=", "<>", "<", "<=", ">", ">=", "<=>", "!="])
            if op == "<=>":
                if "nullsafe" in self.f:
                    self.used.add("nullsafe")
                else:
                    op = "="
            a = self.expr(ty, depth + 1)
            if self.on("mixed_cmp", 0.15):
                bty = r.choice(["int", "dec", "dbl", "str", "dt"])
                if "dt" in (ty, bty) and ty != bty:
                    if "dt_mixed_cmp" in self.f:
                        self.used.add("dt_mixed_cmp")
                    else:
                        bty = ty
                elif "str" in (ty, bty) and ty != bty:
                    if "str_num_cmp" in self.f:
                        self.used.add("str_num_cmp")
                    else:
                        bty = ty
                b = self.expr(bty, depth + 1) if r.random() < 0.5 else self.literal(bty)
            else:
                b = self.expr(ty, depth + 1) if r.random() < 0.5 else self.literal(ty)
            if op in ("=", "<=>", "<>", "!="):
                b, a = self.fit(a, b), self.fit(b, a)
            return E("bin", "bool", op, (a, b))
        if k == "isnull":
            a = self.expr(self.any_ty(), depth + 1)
            return E("post", "bool", r.choice(["IS NULL", "IS NOT NULL"]), (a,))
        if k == "truth":
            # a number used as a truth value, or IS [NOT] TRUE/FALSE
            if r.random() < 0.5:
                return E("post", "bool", r.choice(["IS TRUE", "IS NOT TRUE", "IS FALSE", "IS NOT FALSE"]),
                         (self.pred(depth + 1),))
            return E("un", "bool", "NOT", (self.expr("int", depth + 1),)) if r.random() < 0.3 else \
                E("bin", "bool", "<>", (self.expr("int", depth + 1), lit("0", "int")))
        if k == "in":
            self.used.add("in_list")
            ty = self.any_ty()
            a = self.expr(ty, depth + 1)
            mixed = (ty != "dt" or "dt_mixed_cmp" in self.f) and "in_mixed" in self.f
            # a string longer than the operand column is a mixed value too
            # (quire truncates it to the key: F-14)
            maxlen = self.col_of(a).length if a.kind == "col" and ty == "str" and self.col_of(a) else None
            vals = []
            for _ in range(r.randint(1, 4)):
                if mixed and self.on("mixed_cmp", 0.1):
                    self.used.add("in_mixed")
                    vals.append(self.literal(r.choice(NUMERIC + ("str",))))
                    continue
                v = self.literal(ty)
                if maxlen and len(v.text) - 2 > maxlen and v.text != "NULL":
                    if "in_mixed" not in self.f:
                        v = lit(sql_str(v.text[1:-1].replace("''", "'")[:maxlen].strip(" ")), "str")
                    else:
                        self.used.add("in_mixed")
                vals.append(self.fit_in(a, v))
            return E("in", "bool", "", (a, *vals), neg=r.random() < 0.3)
        if k == "between":
            self.used.add("between")
            ty = self.any_ty()
            return E("between", "bool", "", (self.expr(ty, depth + 1), self.literal(ty), self.literal(ty)),
                     neg=r.random() < 0.3)
        if k == "like":
            self.used.add("like")
            a = self.expr("str", depth + 1)
            pat = r.choice(["'a%'", "'%a%'", "'_'", "'%'", "''", "'A%'", "'%b'", "'a_c'", "'%\\%%'",
                            "'a\\_b'", "'1%'", "'%é%'", "'__%'", "'x '"])
            return E("like", "bool", "", (a, lit(pat, "str")), neg=r.random() < 0.3)
        if k == "in_sub":
            self.used.add("subquery")
            ty = self.any_ty()
            sub = self.subselect(ty)
            return E("in", "bool", "", (self.expr(ty, depth + 1),), neg=r.random() < 0.4, sub=sub)
        self.used.add("subquery")
        return E("subq", "bool", "EXISTS", sub=self.subselect(None), neg=r.random() < 0.3)

    def any_ty(self):
        cols = self.cols()
        if cols and self.rng.random() < 0.85:
            return self.rng.choice(cols)[1].ty
        return self.rng.choice(["int", "dec", "dbl", "str", "dt"])

    # -- FROM
    def from_clause(self, allow_derived=True):
        r = self.rng
        n = 1
        if "join" in self.f and r.random() < 0.55:
            n = r.randint(2, 3)
            self.used.add("join")
        items, scope = [], []
        since_comma = []  # what an ON condition may name: the sources since the last comma
        names = [t.name for t in self.tables]
        used_tables = []
        for i in range(n):
            alias = f"a{i}"
            if i > 0 and "self_join" in self.f and r.random() < 0.15:
                tname = r.choice(used_tables)
                self.used.add("self_join")
            else:
                choices = [t for t in names if t not in used_tables] or names
                tname = r.choice(choices)
            used_tables.append(tname)
            table = next(t for t in self.tables if t.name == tname)
            tcols = [(alias, c) for c in table.columns]
            fi = FromItem(tname, alias)
            if i == 0 and allow_derived and self.on("derived", 0.15):
                fi, tcols = self.derived_table(alias)
            if i > 0:
                kinds = [",", "JOIN", "LEFT JOIN", "CROSS JOIN", "LEFT JOIN", "JOIN"]
                if "right_join" in self.f:
                    kinds.append("RIGHT JOIN")
                fi.join = r.choice(kinds)
                if fi.join == "RIGHT JOIN":
                    self.used.add("right_join")
                if fi.join == ",":
                    since_comma = []
                if fi.join in ("JOIN", "LEFT JOIN", "RIGHT JOIN"):
                    visible = scope if self.on("comma_on_scope", 0.2) else since_comma
                    self.scope = visible + tcols
                    fi.on = self.join_cond(visible, tcols)
            items.append(fi)
            scope = scope + tcols
            since_comma = since_comma + tcols
        self.scope = scope
        return items

    def join_cond(self, left, right):
        """Usually an equality between a column of the new source and an
        earlier one (of a comparable type), sometimes any predicate."""
        r = self.rng
        pairs = [(lc, rc) for lc in left for rc in right if lc[1].ty == rc[1].ty]
        if pairs and r.random() < 0.8:
            lc, rc = r.choice(pairs)
            e = E("bin", "bool", r.choice(["=", "=", "=", "<", ">="]), (self.colref(*lc), self.colref(*rc)))
            if r.random() < 0.3:
                e = E("bin", "bool", r.choice(["AND", "OR"]), (e, self.pred(1)))
            return e
        return self.pred(1)

    def derived_table(self, alias):
        """(SELECT ... ) AS alias over one base table; returns the item and
        the columns it exposes (named r0, r1, ...)."""
        saved = (self.scope, self.used)
        self.used = set()
        t = self.rng.choice(self.tables)
        self.scope = [("d", c) for c in t.columns]
        items = [self.colref(*x) for x in self.rng.sample(self.scope, self.rng.randint(1, len(self.scope)))]
        where = [self.pred(1)] if self.rng.random() < 0.5 else []
        sub = Select(items, [FromItem(t.name, "d")], where=where)
        used = self.used
        self.scope, self.used = saved
        self.used |= used
        cols = [(alias, self._derived_col(f"r{i}", e)) for i, e in enumerate(items)]
        return FromItem("", alias, derived=sub), cols

    def _src(self, e):
        """The Column a column reference in the current scope names."""
        for a, c in self.scope:
            if f"{a}.{c.name}" == e.text:
                return c
        return Column("", "", e.ty, True)

    def _derived_col(self, name, e):
        """A derived table's column: the source column's facts, no SQL type."""
        c = self._src(e)
        return Column(name, "", e.ty, True, lo=c.lo, hi=c.hi, length=c.length, prec=c.prec, scale=c.scale)

    def subselect(self, ty, scalar=False):
        """A one-column subquery over one table, sometimes correlated with
        the current scope. Scalar ones are aggregates (one row)."""
        r = self.rng
        saved = (self.scope, self.outer)
        self.outer = self.scope
        self.depth += 1
        t = r.choice(self.tables)
        self.scope = [(f"s{self.depth}", c) for c in t.columns]
        if ty is None:
            item = lit("1", "int")
        elif scalar:
            cs = self.cols(ty)
            arg = self.colref(*r.choice(cs)) if cs else self.literal(ty)
            item = E("agg", ty if ty != "str" else "str", r.choice(["MAX", "MIN"]), (arg,))
        else:
            cs = self.cols(ty)
            item = self.colref(*r.choice(cs)) if cs else self.literal(ty)
        where = []
        if saved[0] and r.random() < 0.5:  # correlated
            pairs = [(o, i) for o in saved[0] for i in self.scope if o[1].ty == i[1].ty]
            if pairs:
                o, i = r.choice(pairs)
                where.append(E("bin", "bool", "=", (self.colref(*i), self.colref(*o))))
        if r.random() < 0.5:
            self.outer = []
            where.append(self.pred(1))
        sub = Select([item], [FromItem(t.name, f"s{self.depth}")], where=where)
        self.depth -= 1
        self.scope, self.outer = saved
        return sub

    # -- whole queries
    def query(self):
        """A random query (Select, SetOp or With)."""
        self.used = set()
        r = self.rng
        if self.on("cte", 0.1):
            return self.with_query()
        if self.on("union", 0.1):
            a = self.select(allow_order=False)
            n = len(a.items)
            b = self.select(allow_order=False, nitems=n)
            q = SetOp(r.choice(["UNION", "UNION ALL"]), a, b)
            q.features = set(self.used)
            return q
        q = self.select()
        q.features = set(self.used)
        return q

    def with_query(self):
        r = self.rng
        t = r.choice(self.tables)
        self.scope = [("w", c) for c in t.columns]
        items = [self.colref(*x) for x in r.sample(self.scope, r.randint(1, len(self.scope)))]
        cte = Select(items, [FromItem(t.name, "w")], where=[self.pred(1)] if r.random() < 0.5 else [])
        cols = [self._derived_col(f"r{i}", e) for i, e in enumerate(items)]
        scope = [("a0", c) for c in cols]
        self.scope = scope
        sel = self.select_body(self.scope, [FromItem("cte0", "a0", cte=True)])
        q = With([("cte0", cte)], sel)
        q.features = set(self.used)
        return q

    def select(self, allow_order=True, nitems=None):
        from_ = self.from_clause()
        return self.select_body(self.scope, from_, allow_order, nitems)

    def select_body(self, scope, from_, allow_order=True, nitems=None):
        r = self.rng
        self.scope = scope
        q = Select([], from_)
        if "where" in self.f and r.random() < 0.75:
            q.where = [self.pred() for _ in range(r.randint(1, 3))]
            self.used.add("where")
        mode = "plain"
        if "groupby" in self.f and r.random() < 0.35:
            mode = r.choice(["group", "group", "agg"])
            self.used.add("groupby")
        n = nitems or r.randint(1, 4)
        if mode == "plain":
            q.items = [self.item_expr() for _ in range(n)]
            if self.on("distinct", 0.2):
                q.distinct = True
        elif mode == "agg":
            q.items = [self.aggregate() for _ in range(n)]
            safe = [c for c in self.scope if self.surely_not_dependent(q, [], c)]
            if safe and self.on("fgb_violation", 0.1):
                # a bare column beside aggregates, no GROUP BY: 1140
                q.items[r.randrange(len(q.items))] = self.colref(*r.choice(safe))
        else:
            gcols = r.sample(self.scope, min(len(self.scope), r.randint(1, 2)))
            q.group_by = [self.colref(*c) for c in gcols]
            saved = self.scope
            items = []
            for _ in range(n):
                if r.random() < 0.5:
                    # a grouped column, or an expression over grouped columns
                    self.scope = gcols
                    self.in_item = True
                    items.append(self.expr(r.choice(gcols)[1].ty, 1) if r.random() < 0.3
                                 else self.colref(*r.choice(gcols)))
                    self.in_item = False
                    self.scope = saved
                else:
                    items.append(self.aggregate())
            q.items = items
            others = [c for c in self.scope if c not in gcols and self.surely_not_dependent(q, gcols, c)]
            if others and self.on("fgb_violation", 0.1):
                # a column that is neither grouped nor aggregated: 1055
                q.items[r.randrange(len(q.items))] = self.colref(*r.choice(others))
            if self.on("having", 0.4):
                a = self.aggregate()
                q.having = E("bin", "bool", r.choice(["<", ">", "=", ">=", "<>"]), (a, self.literal(
                    "int" if a.ty == "int" else a.ty)))
        if allow_order and self.on("orderby", 0.4):
            k = len(q.items)
            if self.on("limit", 0.5):
                # total order: every output column, by position
                pos = list(range(1, k + 1))
                r.shuffle(pos)
                q.order_by = [(p, r.random() < 0.4) for p in pos]
                q.limit = r.choice([0, 1, 2, 3, 5, 10, 100])
                if r.random() < 0.3:
                    q.offset = r.choice([0, 1, 2, 5])
            else:
                q.order_by = [(r.randint(1, k), r.random() < 0.4) for _ in range(r.randint(1, k))]
        return q

    def surely_not_dependent(self, q, gcols, col):
        """Whether column `col` (alias, Column) is surely not functionally
        dependent on `gcols` in MySQL's sense (which accepts such a column
        under ONLY_FULL_GROUP_BY where MariaDB refuses it): no grouped key
        of its table (PRIMARY KEY or UNIQUE NOT NULL), no grouped column
        of a derived table, and its source in no equality of WHERE or ON."""
        alias = col[0]
        grouped = {c.name for a, c in gcols if a == alias}
        item = next((f for f in q.from_ if f.alias == alias), None)
        if item is None:
            return False
        if item.derived is not None:
            if grouped:
                return False
        else:
            t = next((t for t in self.tables if t.name == item.table), None)
            if t is None:
                return False
            keys = ([t.pk] if t.pk else []) + [
                cols for _, cols, unique in t.indexes
                if unique and all(not t.col(c).nullable for c in cols)]
            if any(set(k) <= grouped for k in keys):
                return False
        conds = list(q.where or []) + [f.on for f in q.from_ if f.on is not None]
        return not any(self._equates(e, alias) for e in conds)

    def _equates(self, e, alias):
        """Whether an = / <=> (or a one-value IN) in `e` names `alias`."""
        if e is None or not isinstance(e, E):
            return False
        if (e.kind == "bin" and e.text in ("=", "<=>")) or (e.kind == "in" and len(e.kids) <= 2):
            if self._names(e, alias):
                return True
        return any(self._equates(k, alias) for k in e.kids)

    def _names(self, e, alias):
        if not isinstance(e, E):
            return False
        if e.kind == "col" and e.text.startswith(alias + "."):
            return True
        return any(self._names(k, alias) for k in e.kids)

    def item_expr(self):
        r = self.rng
        if "window" in self.f and r.random() < 0.15:
            self.used.add("window")
            return self.window()
        for _ in range(10):
            self.in_item = True
            try:
                e = self.expr(r.choice(["int", "dec", "dbl", "str", "dt", "int", "bool"]))
            finally:
                self.in_item = False
            if not all_null(e):
                return e
            if "null_item" in self.f:
                self.used.add("null_item")
                return e
        return self.colref(*r.choice(self.scope)) if self.scope else lit("1", "int")

    def aggregate(self):
        saved, self.in_item = (self.in_item, self.in_agg), True
        self.in_agg = True
        try:
            return self._aggregate()
        finally:
            self.in_item, self.in_agg = saved

    def _aggregate(self):
        r = self.rng
        fn = r.choice(["COUNT", "COUNT", "SUM", "MIN", "MAX", "AVG"])
        if fn == "COUNT" and r.random() < 0.4:
            return E("agg", "int", "COUNT")
        if fn in ("SUM", "AVG"):
            ty = r.choice(NUMERIC)
            # AVG divides: over a DECIMAL product (scale 5, 14, ...) MySQL's
            # 9-digit groups show (F-11); a plain column or literal unless nested_division
            deep = fn == "SUM" or ty != "dec" or "nested_division" in self.f
            arg = self.expr(ty, 1 if deep else 2)
            res = "dbl" if ty == "dbl" else "dec"
        elif fn == "COUNT":
            arg = self.expr(self.any_ty(), 1)
            res = "int"
        else:
            ty = self.any_ty()
            arg = self.expr(ty, 1)
            res = ty
        distinct = fn in ("COUNT", "SUM", "AVG") and self.on("agg_distinct", 0.15)
        return E("agg", res, fn, (arg,), neg=distinct)

    def window(self):
        r = self.rng
        part = self.cols()
        pcol = self.colref(*r.choice(part)) if part else None
        fn = r.choice(["ROW_NUMBER", "RANK", "DENSE_RANK", "SUM", "COUNT", "MIN", "MAX"])
        spec = f"PARTITION BY {pcol.sql()}" if pcol is not None and r.random() < 0.6 else ""
        if fn in ("ROW_NUMBER",):
            # ordered by every column of the scope, so the numbering is deterministic
            # only up to identical rows, whose numbers are interchangeable in a multiset
            keys = ", ".join(f"{a}.{c.name}" for a, c in self.scope)
            return E("win", "int", fn, (), over=f"{spec} ORDER BY {keys}".strip())
        if fn in ("RANK", "DENSE_RANK"):
            c = self.colref(*r.choice(self.scope))
            return E("win", "int", fn, (), over=f"{spec} ORDER BY {c.sql()}".strip())
        ty = "int" if fn == "COUNT" else r.choice(["int", "dec"])
        arg = self.expr(ty, 1)
        return E("win", "dec" if fn == "SUM" else ty, fn, (arg,), over=spec)


def plain_base(rng, tables, features):
    """A query for the TLP and NoREC oracles: plain SELECT over a FROM
    clause (joins allowed), no aggregates, no ORDER BY/LIMIT. Returns
    (QueryGen, Select) so more predicates can be drawn over its scope."""
    feats = set(features) - {"window", "derived"}
    g = QueryGen(rng, tables, feats)
    from_ = g.from_clause(allow_derived=False)
    items = [g.colref(*c) for c in rng.sample(g.scope, min(len(g.scope), rng.randint(1, 4)))]
    q = Select(items, from_)
    if rng.random() < 0.3:
        q.where = [g.pred()]
    q.features = set(g.used)
    return g, q


def clone(x):
    return copy.deepcopy(x)
