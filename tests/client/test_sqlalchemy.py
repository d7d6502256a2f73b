"""SQLAlchemy 2.x ORM against `quire serve`, unchanged.

An application's usual ORM patterns, run through two DBAPI drivers:
PyMySQL (`mysql+pymysql`) and mysql-connector-python
(`mysql+mysqlconnector`). tests/client/run.sh starts a server and runs
this file; point it anywhere else with QUIRE_HOST / QUIRE_PORT (the same
file runs against MariaDB 10.11 to prove the expectations are right:
`QUIRE_PORT=<mariadb port> python3 -m unittest -v test_sqlalchemy`).
QUIRE_SQLA_DRIVERS=pymysql limits the drivers.

The schema is declarative: authors 1-n books, books n-n tags through an
association table, books 1-n reviews (delete-orphan cascade), a
`column_property` holding a correlated scalar subquery, a `version_id_col`
for optimistic locking, server defaults, Boolean / Date / DateTime /
Numeric / Text columns. `create_all` emits whatever DDL SQLAlchemy
chooses (CREATE TABLE with FOREIGN KEY clauses, CREATE INDEX) and
`drop_all` drops it again; reflection reads it back through SHOW CREATE
TABLE.

ENUM and JSON columns sit in tables of their own, created by their checks.

Every check compares the ORM's answer with values written out here from
the seed data, so a wrong answer fails. Loader strategies also count the
statements they send (lazy: one per parent, joinedload: one, selectinload
and subqueryload: one per level).

Checks that need a feature quire does not have yet are listed in PENDING
with the reason; against quire such a check must still fail (it is
reported as skipped with the reason), and fails the run if it starts to
pass, so the entry gets removed. Against other servers PENDING is ignored.
"""

import datetime
import enum
import functools
import os
import unittest
from decimal import Decimal
from typing import Optional

import pymysql
import sqlalchemy as sa
from sqlalchemy import (
    JSON,
    Column,
    ForeignKey,
    Numeric,
    String,
    Table,
    Text,
    case,
    delete,
    event,
    exists,
    func,
    insert,
    literal_column,
    select,
    union,
    update,
)
from sqlalchemy.dialects.mysql import insert as mysql_insert
from sqlalchemy.orm import (
    DeclarativeBase,
    Mapped,
    Session,
    aliased,
    column_property,
    joinedload,
    mapped_column,
    relationship,
    selectinload,
    subqueryload,
)
from sqlalchemy.orm.exc import StaleDataError

HOST = os.environ.get("QUIRE_HOST", "127.0.0.1")
PORT = int(os.environ.get("QUIRE_PORT", "3306"))
DB = "sqla_orm"
DRIVERS = os.environ.get("QUIRE_SQLA_DRIVERS", "pymysql,mysqlconnector").split(",")

# check name -> why it cannot pass on quire yet. Only consulted when the
# server says it is quire.
PENDING = {
}


def server_version():
    c = pymysql.connect(host=HOST, port=PORT, user="root", password="", connect_timeout=10)
    try:
        with c.cursor() as cur:
            cur.execute("SELECT VERSION()")
            return cur.fetchone()[0]
    finally:
        c.close()


VERSION = server_version()
IS_QUIRE = "quire" in VERSION
IS_MARIADB = "MariaDB" in VERSION


def check(fn):
    """A test method whose failure is expected while it is in PENDING."""
    name = fn.__name__[len("test_") :]

    @functools.wraps(fn)
    def run(self):
        reason = PENDING.get(name) if IS_QUIRE else None
        if reason is None:
            return fn(self)
        try:
            fn(self)
        except Exception as e:  # the expected failure; say what it was
            self.skipTest(f"PENDING ({reason}): {type(e).__name__}: {str(e)[:300]}")
        self.fail(f"{name} passes now: remove it from PENDING ({reason})")

    return run


# --- the model -------------------------------------------------------------


class Base(DeclarativeBase):
    pass


class Shelf(enum.Enum):
    fiction = "fiction"
    science = "science"
    history = "history"


book_tag = Table(
    "book_tag",
    Base.metadata,
    Column("book_id", ForeignKey("book.id", ondelete="CASCADE"), primary_key=True),
    Column("tag_id", ForeignKey("tag.id"), primary_key=True),
)


class Author(Base):
    __tablename__ = "author"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(50), unique=True)
    born: Mapped[int]
    books: Mapped[list["Book"]] = relationship(back_populates="author", order_by="Book.id")


class Tag(Base):
    __tablename__ = "tag"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(30), unique=True)
    books: Mapped[list["Book"]] = relationship(
        secondary=book_tag, back_populates="tags", order_by="Book.id"
    )


class Book(Base):
    __tablename__ = "book"
    id: Mapped[int] = mapped_column(primary_key=True)
    title: Mapped[str] = mapped_column(String(100), index=True)
    author_id: Mapped[int] = mapped_column(ForeignKey("author.id"))
    price: Mapped[Decimal] = mapped_column(Numeric(8, 2))
    year: Mapped[int]
    in_print: Mapped[bool] = mapped_column(default=True)
    published: Mapped[Optional[datetime.date]]
    note: Mapped[Optional[str]] = mapped_column(Text)
    created: Mapped[datetime.datetime] = mapped_column(server_default=func.now())
    version: Mapped[int] = mapped_column(nullable=False)
    author: Mapped[Author] = relationship(back_populates="books")
    tags: Mapped[list[Tag]] = relationship(
        secondary=book_tag, back_populates="books", order_by="Tag.id"
    )
    reviews: Mapped[list["Review"]] = relationship(
        back_populates="book", cascade="all, delete-orphan", order_by="Review.id"
    )
    __table_args__ = (sa.Index("ix_book_author_year", "author_id", "year"),)
    __mapper_args__ = {"version_id_col": version}


# Column types in tables of their own (their checks create and drop them),
# so the rest of the schema does not depend on them.
class TypesBase(DeclarativeBase):
    pass


class Edition(TypesBase):
    __tablename__ = "edition"
    id: Mapped[int] = mapped_column(primary_key=True)
    shelf: Mapped[Shelf] = mapped_column(sa.Enum(Shelf), default=Shelf.fiction)


class Profile(TypesBase):
    __tablename__ = "profile"
    id: Mapped[int] = mapped_column(primary_key=True)
    attrs: Mapped[Optional[dict]] = mapped_column(JSON)


class Review(Base):
    __tablename__ = "review"
    id: Mapped[int] = mapped_column(primary_key=True)
    book_id: Mapped[int] = mapped_column(ForeignKey("book.id"))
    stars: Mapped[int] = mapped_column(sa.SmallInteger)
    body: Mapped[str] = mapped_column(String(200), default="")
    book: Mapped[Book] = relationship(back_populates="reviews")


# Correlated scalar subqueries as mapped columns.
Author.book_count = column_property(
    select(func.count(Book.id))
    .where(Book.author_id == Author.id)
    .correlate_except(Book)
    .scalar_subquery()
)
Book.avg_stars = column_property(
    select(func.avg(Review.stars))
    .where(Review.book_id == Book.id)
    .correlate_except(Review)
    .scalar_subquery(),
    deferred=True,
)

# The seed data: (title, author, price, year, tags, stars of its reviews).
AUTHORS = [("Ann", 1950), ("Bob", 1960), ("Cid", 1970)]
TAGS = ["sf", "classic", "short"]
BOOKS = [
    ("Alpha", "Ann", "10.00", 2001, ["sf", "classic"], [5, 4]),
    ("Beta", "Ann", "20.00", 2005, ["classic"], [3]),
    ("Gamma", "Bob", "15.50", 2003, ["sf", "short"], [5, 5, 2]),
    ("Delta", "Bob", "5.25", 2010, [], []),
    ("Epsilon", "Ann", "30.00", 2012, ["sf"], [1]),
]


class Counter:
    """Counts the statements an engine sends (ignoring SAVEPOINT etc.)."""

    def __init__(self, engine):
        self.statements = []
        event.listen(engine, "before_cursor_execute", self._seen)
        self.engine = engine

    def _seen(self, conn, cursor, statement, params, context, executemany):
        self.statements.append(statement)

    def __enter__(self):
        self.statements.clear()
        return self

    def __exit__(self, *exc):
        return False

    @property
    def selects(self):
        return [s for s in self.statements if s.lstrip().upper().startswith("SELECT")]


class OrmTests:
    """The checks; one subclass per driver sets URL."""

    URL = None

    @classmethod
    def setUpClass(cls):
        c = pymysql.connect(host=HOST, port=PORT, user="root", password="", autocommit=True)
        with c.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS {DB}")
            cur.execute(f"CREATE DATABASE {DB}")
        c.close()
        cls.engine = sa.create_engine(cls.URL, pool_size=2, max_overflow=2)
        Base.metadata.create_all(cls.engine)
        cls.counter = Counter(cls.engine)
        with Session(cls.engine) as s:
            authors = {n: Author(name=n, born=b) for n, b in AUTHORS}
            tags = {n: Tag(name=n) for n in TAGS}
            for title, who, price, year, tag_names, stars in BOOKS:
                b = Book(
                    title=title,
                    author=authors[who],
                    price=Decimal(price),
                    year=year,
                    published=datetime.date(year, 3, 1),
                    tags=[tags[t] for t in tag_names],
                    reviews=[Review(stars=n) for n in stars],
                )
                s.add(b)
            s.add(authors["Cid"])
            s.commit()

    @classmethod
    def tearDownClass(cls):
        Base.metadata.drop_all(cls.engine)
        cls.engine.dispose()

    def session(self):
        return Session(self.engine)

    def cleanup(self, *statements):
        """Run these statements after the test, passed or not, so that one
        failing check leaves the seed data as it was for the others."""

        def run():
            c = pymysql.connect(host=HOST, port=PORT, user="root", password="", database=DB,
                                autocommit=True)
            try:
                with c.cursor() as cur:
                    for sql in statements:
                        cur.execute(sql)
            finally:
                c.close()

        self.addCleanup(run)

    def ids(self):
        with self.session() as s:
            return {
                "author": dict(s.execute(select(Author.name, Author.id)).all()),
                "book": dict(s.execute(select(Book.title, Book.id)).all()),
            }

    # --- schema ------------------------------------------------------------

    @check
    def test_reflection(self):
        insp = sa.inspect(self.engine)
        self.assertEqual(
            sorted(insp.get_table_names()), ["author", "book", "book_tag", "review", "tag"]
        )
        self.assertTrue(insp.has_table("book"))
        self.assertFalse(insp.has_table("no_such_table"))
        cols = {c["name"]: c for c in insp.get_columns("book")}
        self.assertEqual(
            list(cols),
            ["id", "title", "author_id", "price", "year", "in_print", "published", "note",
             "created", "version"],
        )
        self.assertIsInstance(cols["price"]["type"], sa.Numeric)
        self.assertEqual((cols["price"]["type"].precision, cols["price"]["type"].scale), (8, 2))
        self.assertTrue(cols["id"]["autoincrement"])
        self.assertFalse(cols["title"]["nullable"])
        self.assertTrue(cols["note"]["nullable"])
        self.assertIsNotNone(cols["created"]["default"])
        self.assertEqual(insp.get_pk_constraint("book_tag")["constrained_columns"], ["book_id", "tag_id"])
        idx = {i["name"]: i for i in insp.get_indexes("book")}
        self.assertEqual(idx["ix_book_title"]["column_names"], ["title"])
        self.assertEqual(idx["ix_book_author_year"]["column_names"], ["author_id", "year"])
        uniq = insp.get_unique_constraints("author") + [
            i for i in insp.get_indexes("author") if i.get("unique")
        ]
        self.assertTrue(any(u["column_names"] == ["name"] for u in uniq), uniq)
        # A second metadata reflects the whole schema.
        md = sa.MetaData()
        md.reflect(self.engine)
        self.assertEqual(set(md.tables), {"author", "book", "book_tag", "review", "tag"})

    @check
    def test_foreign_keys_reflected(self):
        # The FOREIGN KEY clauses create_all sent come back (MySQL keeps them
        # in SHOW CREATE TABLE).
        fks = sa.inspect(self.engine).get_foreign_keys("book_tag")
        self.assertEqual(
            sorted((f["constrained_columns"][0], f["referred_table"], f["options"].get("ondelete")) for f in fks),
            [("book_id", "book", "CASCADE"), ("tag_id", "tag", None)],
        )

    @check
    def test_foreign_key_enforced(self):
        self.cleanup("DELETE FROM review WHERE book_id = 999999")
        # A review of a book that does not exist: 1452 in MySQL.
        with self.session() as s:
            s.add(Review(book_id=999999, stars=1))
            with self.assertRaises(sa.exc.IntegrityError) as cm:
                s.commit()
            self.assertEqual(cm.exception.orig.args[0], 1452)

    # --- reading -----------------------------------------------------------

    @check
    def test_filter_order_limit_offset(self):
        with self.session() as s:
            q = (
                select(Book.title)
                .where(Book.price > 6)
                .order_by(Book.price.desc())
                .limit(2)
                .offset(1)
            )
            self.assertEqual(s.scalars(q).all(), ["Beta", "Gamma"])
            # filter_by, like, between, in_, is_(None), ilike, first/one.
            self.assertEqual(s.scalars(select(Book.title).filter_by(year=2003)).one(), "Gamma")
            self.assertEqual(
                s.scalars(select(Book.title).where(Book.title.like("%ta")).order_by(Book.title)).all(),
                ["Beta", "Delta"],
            )
            self.assertEqual(
                s.scalars(select(Book.title).where(Book.year.between(2003, 2010)).order_by(Book.year)).all(),
                ["Gamma", "Beta", "Delta"],
            )
            self.assertEqual(
                s.scalars(select(Book.title).where(Book.title.in_(["Beta", "Nope", "Delta"])).order_by(Book.id)).all(),
                ["Beta", "Delta"],
            )
            self.assertEqual(s.scalar(select(func.count()).where(Book.note.is_(None))), 5)
            self.assertEqual(s.scalars(select(Book.title).where(Book.title.ilike("ALPHA"))).all(), ["Alpha"])
            self.assertEqual(s.scalars(select(Author.name).where(Author.name.startswith("B"))).one(), "Bob")
            self.assertIsNone(s.scalars(select(Book).where(Book.year == 1)).one_or_none())
            with self.assertRaises(sa.exc.NoResultFound):
                s.scalars(select(Book).where(Book.year == 1)).one()
            # Legacy Query API: count() wraps the query in a derived table.
            self.assertEqual(s.query(Book).filter(Book.price < 16).count(), 3)
            self.assertEqual(
                [b.title for b in s.query(Book).order_by(Book.year.desc()).limit(2)],
                ["Epsilon", "Delta"],
            )
            # session.get by primary key, then the identity map.
            b = s.get(Book, self.ids()["book"]["Gamma"])
            self.assertEqual((b.title, b.price, b.year), ("Gamma", Decimal("15.50"), 2003))

    @check
    def test_column_types_round_trip(self):
        with self.session() as s:
            b = s.scalars(select(Book).where(Book.title == "Gamma")).one()
            self.assertIs(b.in_print, True)
            self.assertEqual(b.published, datetime.date(2003, 3, 1))
            self.assertIsInstance(b.created, datetime.datetime)
            self.assertLess(abs((datetime.datetime.now() - b.created).total_seconds()), 24 * 3600)
            self.assertEqual(b.version, 1)
            self.assertEqual(
                s.scalars(select(Book.title).where(Book.in_print.is_(True), Book.published < datetime.date(2004, 1, 1))
                          .order_by(Book.id)).all(),
                ["Alpha", "Gamma"],
            )

    def with_table(self, model, body):
        model.__table__.create(self.engine)
        try:
            with self.session() as s:
                body(s)
        finally:
            model.__table__.drop(self.engine)

    @check
    def test_enum_column(self):
        def body(s):
            s.add_all([Edition(), Edition(shelf=Shelf.history), Edition(shelf=Shelf.science)])
            s.commit()
            self.assertEqual(s.scalars(select(Edition.shelf).order_by(Edition.id)).all(),
                             [Shelf.fiction, Shelf.history, Shelf.science])
            self.assertEqual(s.scalars(select(Edition.id).where(Edition.shelf == Shelf.history)).all(), [2])
            col = sa.inspect(self.engine).get_columns("edition")[1]
            self.assertEqual(col["type"].enums, ["fiction", "science", "history"])

        self.with_table(Edition, body)

    @check
    def test_json_column(self):
        def body(s):
            s.add_all([Profile(attrs={"pages": 203, "langs": ["en"]}), Profile(attrs={"pages": 210}), Profile(attrs=None)])
            s.commit()
            self.assertEqual(s.scalars(select(Profile.attrs).order_by(Profile.id)).all(),
                             [{"pages": 203, "langs": ["en"]}, {"pages": 210}, None])
            self.assertEqual(
                s.scalars(select(Profile.id).where(Profile.attrs["pages"].as_integer() > 205)).all(), [2]
            )

        self.with_table(Profile, body)

    @check
    def test_in_select(self):
        with self.session() as s:
            recent = select(Book.author_id).where(Book.year > 2008)
            self.assertEqual(
                s.scalars(select(Author.name).where(Author.id.in_(recent)).order_by(Author.name)).all(),
                ["Ann", "Bob"],
            )
            self.assertEqual(
                s.scalars(select(Author.name).where(Author.id.not_in(select(Book.author_id)))).all(),
                ["Cid"],
            )
            # IN over a subquery with its own join and GROUP BY ... HAVING.
            well_reviewed = (
                select(Review.book_id).group_by(Review.book_id).having(func.avg(Review.stars) >= 4)
            )
            self.assertEqual(
                s.scalars(select(Book.title).where(Book.id.in_(well_reviewed)).order_by(Book.id)).all(),
                ["Alpha", "Gamma"],
            )

    @check
    def test_any_has(self):
        with self.session() as s:
            self.assertEqual(
                s.scalars(select(Author.name).where(Author.books.any(Book.price < 6))).all(), ["Bob"]
            )
            self.assertEqual(
                s.scalars(select(Author.name).where(~Author.books.any()).order_by(Author.id)).all(), ["Cid"]
            )
            self.assertEqual(
                s.scalars(select(Book.title).where(Book.tags.any(Tag.name == "sf")).order_by(Book.id)).all(),
                ["Alpha", "Gamma", "Epsilon"],
            )
            self.assertEqual(s.scalars(select(Book.title).where(~Book.tags.any())).all(), ["Delta"])
            self.assertEqual(
                s.scalars(select(Book.title).where(Book.author.has(Author.born < 1955)).order_by(Book.id)).all(),
                ["Alpha", "Beta", "Epsilon"],
            )
            # Nested: tags of books by authors born after 1955.
            self.assertEqual(
                s.scalars(
                    select(Tag.name).where(Tag.books.any(Book.author.has(Author.born > 1955))).order_by(Tag.id)
                ).all(),
                ["sf", "short"],
            )
            # contains() on a many-to-many collection.
            sf = s.scalars(select(Tag).where(Tag.name == "sf")).one()
            self.assertEqual(
                s.scalars(select(Book.title).where(Book.tags.contains(sf)).order_by(Book.id)).all(),
                ["Alpha", "Gamma", "Epsilon"],
            )

    @check
    def test_correlated_scalar_subquery(self):
        with self.session() as s:
            n = (
                select(func.count(Book.id))
                .where(Book.author_id == Author.id)
                .scalar_subquery()
                .label("n")
            )
            self.assertEqual(
                s.execute(select(Author.name, n).order_by(Author.id)).all(),
                [("Ann", 3), ("Bob", 2), ("Cid", 0)],
            )
            # In WHERE and ORDER BY too.
            top = (
                select(func.max(Review.stars)).where(Review.book_id == Book.id).scalar_subquery()
            )
            self.assertEqual(
                s.scalars(select(Book.title).where(top == 5).order_by(Book.id)).all(), ["Alpha", "Gamma"]
            )
            self.assertEqual(
                s.scalars(select(Author.name).order_by(n.desc(), Author.name)).all(), ["Ann", "Bob", "Cid"]
            )
            # column_property: loaded with the entity, usable in filters.
            self.assertEqual(
                [(a.name, a.book_count) for a in s.scalars(select(Author).order_by(Author.id))],
                [("Ann", 3), ("Bob", 2), ("Cid", 0)],
            )
            self.assertEqual(
                s.scalars(select(Author.name).where(Author.book_count >= 2).order_by(Author.id)).all(),
                ["Ann", "Bob"],
            )
            g = s.scalars(select(Book).where(Book.title == "Gamma")).one()
            self.assertEqual(g.avg_stars, Decimal("4.0000"))  # deferred: its own SELECT

    @check
    def test_aggregates_group_by_having(self):
        with self.session() as s:
            rows = s.execute(
                select(Author.name, func.count(Book.id), func.sum(Book.price), func.min(Book.year))
                .join(Author.books)
                .group_by(Author.name)
                .having(func.count(Book.id) > 1)
                .order_by(Author.name)
            ).all()
            self.assertEqual(
                rows, [("Ann", 3, Decimal("60.00"), 2001), ("Bob", 2, Decimal("20.75"), 2003)]
            )
            self.assertEqual(s.scalar(select(func.avg(Book.price))), Decimal("16.150000"))
            self.assertEqual(s.scalar(select(func.count(func.distinct(Book.author_id)))), 2)
            self.assertEqual(
                s.execute(
                    select(
                        case((Book.price >= 15, "dear"), else_="cheap").label("band"), func.count()
                    )
                    .group_by(literal_column("band"))
                    .order_by(literal_column("band"))
                ).all(),
                [("cheap", 2), ("dear", 3)],
            )
            self.assertEqual(
                s.execute(
                    select(Review.stars, func.count()).group_by(Review.stars).order_by(Review.stars.desc())
                ).all(),
                [(5, 3), (4, 1), (3, 1), (2, 1), (1, 1)],
            )

    @check
    def test_joins(self):
        with self.session() as s:
            self.assertEqual(
                s.execute(
                    select(Author.name, Book.title).outerjoin(Author.books).order_by(Author.id, Book.id)
                ).all(),
                [("Ann", "Alpha"), ("Ann", "Beta"), ("Ann", "Epsilon"), ("Bob", "Gamma"), ("Bob", "Delta"),
                 ("Cid", None)],
            )
            self.assertEqual(
                s.scalars(
                    select(Book.title).join(Book.tags).where(Tag.name == "classic").order_by(Book.id)
                ).all(),
                ["Alpha", "Beta"],
            )
            # Three-way join through the association table, DISTINCT.
            self.assertEqual(
                s.scalars(
                    select(Author.name).distinct().join(Author.books).join(Book.tags)
                    .where(Tag.name == "short")
                ).all(),
                ["Bob"],
            )
            # Self join through aliased(): pairs of books by one author, the
            # second dearer.
            b2 = aliased(Book)
            pairs = s.execute(
                select(Book.title, b2.title)
                .join(b2, (b2.author_id == Book.author_id) & (b2.price > Book.price))
                .order_by(Book.id, b2.id)
            ).all()
            self.assertEqual(
                pairs,
                [("Alpha", "Beta"), ("Alpha", "Epsilon"), ("Beta", "Epsilon"), ("Delta", "Gamma")],
            )
            # Outer join to a derived table (a subquery in FROM).
            stars = (
                select(Review.book_id, func.sum(Review.stars).label("total"))
                .group_by(Review.book_id)
                .subquery()
            )
            self.assertEqual(
                s.execute(
                    select(Book.title, func.coalesce(stars.c.total, 0))
                    .outerjoin(stars, stars.c.book_id == Book.id)
                    .order_by(Book.id)
                ).all(),
                [("Alpha", 9), ("Beta", 3), ("Gamma", 12), ("Delta", 0), ("Epsilon", 1)],
            )
            # Entities from a join: (Book, Author) tuples.
            got = s.execute(select(Book, Author).join(Book.author).where(Book.year > 2009).order_by(Book.id)).all()
            self.assertEqual([(b.title, a.name) for b, a in got], [("Delta", "Bob"), ("Epsilon", "Ann")])

    # --- loader strategies -------------------------------------------------

    def books_by_author(self, authors):
        return {a.name: [b.title for b in a.books] for a in authors}

    EXPECTED_BOOKS = {"Ann": ["Alpha", "Beta", "Epsilon"], "Bob": ["Gamma", "Delta"], "Cid": []}

    @check
    def test_lazy_load(self):
        with self.session() as s, self.counter as c:
            authors = s.scalars(select(Author).order_by(Author.id)).all()
            self.assertEqual(len(c.selects), 1)
            self.assertEqual(self.books_by_author(authors), self.EXPECTED_BOOKS)
            self.assertEqual(len(c.selects), 4)  # one lazy load per author
            b = s.scalars(select(Book).where(Book.title == "Alpha")).one()
            self.assertEqual([t.name for t in b.tags], ["sf", "classic"])  # via book_tag
            self.assertEqual([r.stars for r in b.reviews], [5, 4])
            self.assertEqual(b.author.name, "Ann")  # already in the identity map
            self.assertEqual(len(c.selects), 7)

    @check
    def test_joinedload(self):
        with self.session() as s, self.counter as c:
            authors = s.scalars(
                select(Author).options(joinedload(Author.books).joinedload(Book.reviews)).order_by(Author.id)
            ).unique().all()
            self.assertEqual(self.books_by_author(authors), self.EXPECTED_BOOKS)
            self.assertEqual([r.stars for r in authors[1].books[0].reviews], [5, 5, 2])
            self.assertEqual(len(c.selects), 1)
            # joinedload with LIMIT: SQLAlchemy wraps the limited query in a
            # derived table and joins outside it.
            books = s.scalars(
                select(Book).options(joinedload(Book.reviews), joinedload(Book.author))
                .order_by(Book.price.desc()).limit(2)
            ).unique().all()
            self.assertEqual([(b.title, b.author.name, [r.stars for r in b.reviews]) for b in books],
                             [("Epsilon", "Ann", [1]), ("Beta", "Ann", [3])])
            self.assertEqual(len(c.selects), 2)

    @check
    def test_joinedload_many_to_many(self):
        # The secondary table and the target are one nested join:
        # `book LEFT OUTER JOIN (book_tag JOIN tag ON ..) ON ..`.
        with self.session() as s, self.counter as c:
            books = s.scalars(select(Book).options(joinedload(Book.tags)).order_by(Book.id)).unique().all()
            self.assertEqual({b.title: [t.name for t in b.tags] for b in books},
                             {"Alpha": ["sf", "classic"], "Beta": ["classic"], "Gamma": ["sf", "short"],
                              "Delta": [], "Epsilon": ["sf"]})
            self.assertEqual(len(c.selects), 1)

    @check
    def test_selectinload(self):
        with self.session() as s, self.counter as c:
            authors = s.scalars(
                select(Author).options(selectinload(Author.books).selectinload(Book.reviews)).order_by(Author.id)
            ).all()
            self.assertEqual(self.books_by_author(authors), self.EXPECTED_BOOKS)
            self.assertEqual([r.stars for r in authors[1].books[0].reviews], [5, 5, 2])
            self.assertEqual(len(c.selects), 3)
            tags = s.scalars(select(Tag).options(selectinload(Tag.books)).order_by(Tag.id)).all()
            self.assertEqual(
                {t.name: [b.title for b in t.books] for t in tags},
                {"sf": ["Alpha", "Gamma", "Epsilon"], "classic": ["Alpha", "Beta"], "short": ["Gamma"]},
            )
            self.assertEqual(len(c.selects), 5)

    @check
    def test_subqueryload(self):
        with self.session() as s, self.counter as c:
            authors = s.scalars(
                select(Author).options(subqueryload(Author.books)).where(Author.born < 1965)
                .order_by(Author.id).limit(5)
            ).all()
            self.assertEqual(self.books_by_author(authors), {"Ann": ["Alpha", "Beta", "Epsilon"], "Bob": ["Gamma", "Delta"]})
            self.assertEqual(len(c.selects), 2)

    # --- other query shapes ------------------------------------------------

    @check
    def test_exists(self):
        with self.session() as s:
            early = exists().where(Book.author_id == Author.id, Book.year < 2002)
            self.assertEqual(s.scalars(select(Author.name).where(early)).all(), ["Ann"])
            self.assertIs(s.scalar(select(exists().where(Book.price > 25))), True)
            self.assertIs(s.scalar(select(exists().where(Book.price > 250))), False)
            self.assertIs(s.query(s.query(Book).filter(Book.year == 2010).exists()).scalar(), True)

    @check
    def test_union(self):
        with self.session() as s:
            u = union(select(Author.name.label("n")), select(Tag.name)).subquery()
            self.assertEqual(
                s.scalars(select(u.c.n).order_by(u.c.n)).all(), ["Ann", "Bob", "Cid", "classic", "sf", "short"]
            )
            ua = sa.union_all(
                select(Book.title).where(Book.year < 2004), select(Book.title).where(Book.price < 16)
            ).order_by("title")
            self.assertEqual(s.scalars(ua).all(), ["Alpha", "Alpha", "Delta", "Gamma", "Gamma"])
            self.assertEqual(
                s.scalars(
                    sa.except_(select(Book.title), select(Book.title).where(Book.year > 2004)).order_by("title")
                ).all(),
                ["Alpha", "Gamma"],
            )

    @check
    def test_cte(self):
        with self.session() as s:
            totals = (
                select(Book.author_id, func.sum(Book.price).label("total"))
                .group_by(Book.author_id)
                .cte("totals")
            )
            self.assertEqual(
                s.execute(
                    select(Author.name, totals.c.total)
                    .join(totals, totals.c.author_id == Author.id)
                    .order_by(totals.c.total.desc())
                ).all(),
                [("Ann", Decimal("60.00")), ("Bob", Decimal("20.75"))],
            )
            # WITH RECURSIVE: 1..5.
            n = select(literal_column("1").label("i")).cte("n", recursive=True)
            n = n.union_all(select(n.c.i + 1).where(n.c.i < 5))
            self.assertEqual(s.scalars(select(n.c.i).order_by(n.c.i)).all(), [1, 2, 3, 4, 5])

    @check
    def test_window_functions(self):
        with self.session() as s:
            rn = func.row_number().over(partition_by=Book.author_id, order_by=Book.price.desc()).label("rn")
            self.assertEqual(
                s.execute(select(Book.title, rn).order_by(Book.author_id, rn)).all(),
                [("Epsilon", 1), ("Beta", 2), ("Alpha", 3), ("Gamma", 1), ("Delta", 2)],
            )
            running = func.sum(Book.price).over(order_by=Book.year).label("running")
            self.assertEqual(
                s.execute(select(Book.year, running).order_by(Book.year)).all(),
                [(2001, Decimal("10.00")), (2003, Decimal("25.50")), (2005, Decimal("45.50")),
                 (2010, Decimal("50.75")), (2012, Decimal("80.75"))],
            )
            # The top book of each author through a window in a subquery.
            ranked = select(Book.title, Book.author_id, rn).subquery()
            self.assertEqual(
                s.scalars(select(ranked.c.title).where(ranked.c.rn == 1).order_by(ranked.c.author_id)).all(),
                ["Epsilon", "Gamma"],
            )
            self.assertEqual(
                s.execute(
                    select(Review.stars, func.rank().over(order_by=Review.stars.desc()), func.dense_rank().over(order_by=Review.stars.desc()))
                    .order_by(Review.stars.desc(), Review.id).limit(4)
                ).all(),
                [(5, 1, 1), (5, 1, 1), (5, 1, 1), (4, 4, 2)],
            )

    @check
    def test_for_update(self):
        with self.session() as s:
            with s.begin():
                b = s.scalars(select(Book).where(Book.title == "Beta").with_for_update()).one()
                self.assertEqual(b.year, 2005)
                got = s.scalars(select(Author.name).where(Author.id == b.author_id).with_for_update(read=True)).one()
                self.assertEqual(got, "Ann")

    @check
    def test_for_update_nowait_skip_locked(self):
        with self.session() as s1, self.session() as s2:
            with s1.begin():
                s1.scalars(select(Book).where(Book.title == "Beta").with_for_update()).one()
                with s2.begin():
                    with self.assertRaises(sa.exc.DBAPIError) as cm:
                        s2.scalars(select(Book).where(Book.title == "Beta").with_for_update(nowait=True)).all()
                    # MySQL 8.0: 3572 ER_LOCK_NOWAIT; MariaDB says 1205.
                    self.assertEqual(cm.exception.orig.args[0], 1205 if IS_MARIADB else 3572)
                with s2.begin():
                    got = s2.scalars(
                        select(Book.title).where(Book.price > 15).order_by(Book.id).with_for_update(skip_locked=True)
                    ).all()
                    self.assertEqual(got, ["Gamma", "Epsilon"])

    # --- writing -----------------------------------------------------------

    @check
    def test_add_commit_cascade(self):
        self.cleanup(
            "DELETE FROM review WHERE book_id IN (SELECT id FROM book WHERE title IN ('Zeta', 'Eta'))",
            "DELETE FROM book_tag WHERE book_id IN (SELECT id FROM book WHERE title IN ('Zeta', 'Eta'))",
            "DELETE FROM book WHERE title IN ('Zeta', 'Eta')",
            "DELETE FROM tag WHERE name = 'new'",
            "DELETE FROM author WHERE name = 'Dee'",
        )
        with self.session() as s:
            a = Author(name="Dee", born=1980)
            a.books = [
                Book(title="Zeta", price=Decimal("7.10"), year=2020, tags=[Tag(name="new")],
                     reviews=[Review(stars=4, body="ok")]),
                Book(title="Eta", price=Decimal("8.20"), year=2021, in_print=False),
            ]
            s.add(a)
            s.commit()
            self.assertIsInstance(a.id, int)
            ids = [b.id for b in a.books]
            self.assertTrue(all(isinstance(i, int) and i > 0 for i in ids))
        with self.session() as s:
            a = s.scalars(select(Author).where(Author.name == "Dee")).one()
            self.assertEqual([(b.title, b.price, b.in_print) for b in a.books],
                             [("Zeta", Decimal("7.10"), True), ("Eta", Decimal("8.20"), False)])
            self.assertEqual([t.name for t in a.books[0].tags], ["new"])
            self.assertEqual(a.book_count, 2)
            # Collections: move a tag, delete a book (its reviews go with it:
            # delete-orphan; its book_tag rows: the relationship).
            new = a.books[0].tags[0]
            a.books[0].tags.remove(new)
            a.books[1].tags.append(new)
            s.commit()
            self.assertEqual(
                s.scalars(select(Book.title).join(Book.tags).where(Tag.name == "new")).all(), ["Eta"]
            )
            zeta = a.books[0]
            s.delete(zeta)
            s.commit()
            self.assertEqual(s.scalar(select(func.count()).select_from(Review).where(Review.body == "ok")), 0)
            for b in list(a.books):
                s.delete(b)
            s.delete(s.scalars(select(Tag).where(Tag.name == "new")).one())
            s.delete(a)
            s.commit()
            self.assertEqual(s.scalar(select(func.count()).select_from(Author).where(Author.name == "Dee")), 0)
            self.assertEqual(s.scalar(select(func.count()).select_from(book_tag)), 6)

    @check
    def test_bulk_update_delete(self):
        self.cleanup(
            "DELETE FROM book WHERE author_id IN (SELECT id FROM author WHERE name = 'Bulk')",
            "DELETE FROM author WHERE name = 'Bulk'",
        )
        with self.session() as s:
            a = Author(name="Bulk", born=1990,
                       books=[Book(title=f"B{i}", price=Decimal(i), year=2000 + i) for i in range(1, 7)])
            s.add(a)
            s.commit()
            aid = a.id
            # ORM-enabled UPDATE, synchronize_session="evaluate" (the default)
            # updates loaded objects in Python.
            loaded = s.scalars(select(Book).where(Book.author_id == aid).order_by(Book.id)).all()
            r = s.execute(
                update(Book).where(Book.author_id == aid, Book.year <= 2003).values(price=Book.price * 10, note="x")
            )
            self.assertEqual(r.rowcount, 3)
            self.assertEqual([b.price for b in loaded[:4]], [10, 20, 30, 4])
            # synchronize_session="fetch" (SELECT first on MySQL, RETURNING on MariaDB).
            r = s.execute(
                update(Book).where(Book.author_id == aid, Book.title.in_(["B5", "B6"])).values(year=Book.year + 100),
                execution_options={"synchronize_session": "fetch"},
            )
            self.assertEqual(r.rowcount, 2)
            self.assertEqual(loaded[5].year, 2106)
            # Core UPDATE with a subquery in SET and WHERE.
            r = s.execute(
                update(Book)
                .where(Book.author_id.in_(select(Author.id).where(Author.name == "Bulk")), Book.note.is_(None))
                .values(note=select(Author.name).where(Author.id == aid).scalar_subquery()),
                execution_options={"synchronize_session": False},
            )
            self.assertEqual(r.rowcount, 3)
            s.commit()
            self.assertEqual(
                s.execute(select(Book.title, Book.price, Book.year, Book.note).where(Book.author_id == aid).order_by(Book.id)).all(),
                [("B1", Decimal("10.00"), 2001, "x"), ("B2", Decimal("20.00"), 2002, "x"), ("B3", Decimal("30.00"), 2003, "x"),
                 ("B4", Decimal("4.00"), 2004, "Bulk"), ("B5", Decimal("5.00"), 2105, "Bulk"), ("B6", Decimal("6.00"), 2106, "Bulk")],
            )
            # ORM-enabled DELETE.
            r = s.execute(delete(Book).where(Book.author_id == aid, Book.year > 2100))
            self.assertEqual(r.rowcount, 2)
            r = s.execute(
                delete(Book).where(Book.author_id.in_(select(Author.id).where(Author.name == "Bulk"))),
                execution_options={"synchronize_session": "fetch"},
            )
            self.assertEqual(r.rowcount, 4)
            s.execute(delete(Author).where(Author.id == aid))
            s.commit()
            self.assertEqual(s.scalar(select(func.count()).select_from(Book)), 5)

    @check
    def test_bulk_insert_and_upsert(self):
        self.cleanup("DELETE FROM tag WHERE name LIKE 't_'")
        with self.session() as s:
            s.execute(insert(Tag), [{"name": "t1"}, {"name": "t2"}, {"name": "t3"}])  # executemany
            s.execute(insert(Tag).values([{"name": "t4"}, {"name": "t5"}]))  # multi-row VALUES
            s.commit()
            self.assertEqual(
                s.scalars(select(Tag.name).where(Tag.name.like("t_")).order_by(Tag.name)).all(),
                ["t1", "t2", "t3", "t4", "t5"],
            )
            s.execute(delete(Tag).where(Tag.name.like("t_")))
            s.commit()

    @check
    def test_on_duplicate_key_update(self):
        self.cleanup("DELETE FROM tag WHERE name LIKE 'dup%'")
        with self.session() as s:
            s.execute(insert(Tag).values(name="dup"))
            tid = s.scalar(select(Tag.id).where(Tag.name == "dup"))
            stmt = mysql_insert(Tag).values(id=tid, name="dup")
            # SQLAlchemy writes `VALUES (...) AS new ON DUPLICATE KEY UPDATE
            # name = concat(new.name, ...)` for MySQL 8.0.20+ servers and
            # `VALUES(name)` for MariaDB.
            s.execute(stmt.on_duplicate_key_update(name=func.concat(stmt.inserted.name, "-again")))
            s.commit()
            self.assertEqual(s.scalar(select(Tag.name).where(Tag.id == tid)), "dup-again")
            s.execute(delete(Tag).where(Tag.id == tid))
            s.commit()

    @check
    def test_merge(self):
        self.cleanup("DELETE FROM author WHERE name LIKE 'Mer%'")
        with self.session() as s:
            s.add(Author(name="Mer", born=1900))
            s.commit()
            aid = s.scalar(select(Author.id).where(Author.name == "Mer"))
        with self.session() as s, self.counter as c:
            merged = s.merge(Author(id=aid, name="Mer", born=1901))  # SELECT, then UPDATE
            fresh = s.merge(Author(id=aid + 1000, name="Mer2", born=1902))  # SELECT, then INSERT
            s.commit()
            self.assertEqual((merged.born, fresh.id), (1901, aid + 1000))
            self.assertTrue(any(st.lstrip().upper().startswith("UPDATE") for st in c.statements))
            self.assertTrue(any(st.lstrip().upper().startswith("INSERT") for st in c.statements))
        with self.session() as s:
            self.assertEqual(
                s.execute(select(Author.name, Author.born).where(Author.name.like("Mer%")).order_by(Author.id)).all(),
                [("Mer", 1901), ("Mer2", 1902)],
            )
            s.execute(delete(Author).where(Author.name.like("Mer%")))
            s.commit()

    @check
    def test_optimistic_version_id(self):
        self.cleanup("DELETE FROM book WHERE title = 'Ver'")
        with self.session() as s:
            s.add(Book(title="Ver", author_id=self.ids()["author"]["Cid"], price=Decimal("1.00"), year=1999))
            s.commit()
        with self.session() as s1, self.session() as s2:
            b1 = s1.scalars(select(Book).where(Book.title == "Ver")).one()
            b2 = s2.scalars(select(Book).where(Book.title == "Ver")).one()
            self.assertEqual((b1.version, b2.version), (1, 1))
            s2.commit()  # end s2's snapshot; b2 keeps version 1 in memory
            b2 = s2.scalars(select(Book).where(Book.title == "Ver")).one()
            b1.price = Decimal("2.00")
            s1.commit()  # UPDATE ... WHERE id = ? AND version = 1
            self.assertEqual(b1.version, 2)
            b2.price = Decimal("3.00")
            with self.assertRaises(StaleDataError):
                s2.flush()  # its UPDATE matches no row (version is 2 now)
            s2.rollback()
            b2 = s2.scalars(select(Book).where(Book.title == "Ver")).one()
            self.assertEqual((b2.price, b2.version), (Decimal("2.00"), 2))
            s2.delete(b2)
            s2.commit()

    @check
    def test_savepoint_and_rollback(self):
        self.cleanup("DELETE FROM tag WHERE name IN ('kept', 'inner-kept', 'undone', 'gone')")
        with self.session() as s:
            s.add(Tag(name="kept"))
            with s.begin_nested():  # SAVEPOINT
                s.add(Tag(name="inner-kept"))
            nested = s.begin_nested()
            s.add(Tag(name="undone"))
            s.flush()
            self.assertEqual(s.scalar(select(func.count()).where(Tag.name == "undone")), 1)
            nested.rollback()  # ROLLBACK TO SAVEPOINT
            self.assertEqual(s.scalar(select(func.count()).where(Tag.name == "undone")), 0)
            # A failing flush inside a savepoint: the outer transaction survives.
            try:
                with s.begin_nested():
                    s.add(Tag(name="kept"))  # duplicate unique name: 1062
                    s.flush()
                self.fail("duplicate name accepted")
            except sa.exc.IntegrityError as e:
                self.assertEqual(e.orig.args[0], 1062)
            s.commit()
        with self.session() as s:
            self.assertEqual(
                s.scalars(select(Tag.name).where(Tag.name.in_(["kept", "inner-kept", "undone"])).order_by(Tag.name)).all(),
                ["inner-kept", "kept"],
            )
            # Whole-transaction rollback.
            s.add(Tag(name="gone"))
            s.flush()
            s.rollback()
            self.assertEqual(s.scalar(select(func.count()).where(Tag.name == "gone")), 0)
            s.execute(delete(Tag).where(Tag.name.in_(["kept", "inner-kept"])))
            s.commit()
        # Another connection never saw the rolled-back rows.
        with self.engine.connect() as conn:
            self.assertEqual(conn.scalar(select(func.count()).select_from(Tag)), 3)

    @check
    def test_isolation_serializable(self):
        with self.engine.connect().execution_options(isolation_level="SERIALIZABLE") as conn:
            self.assertEqual(conn.get_isolation_level(), "SERIALIZABLE")

    @check
    def test_isolation_and_autocommit(self):
        # Engine-level isolation levels SQLAlchemy sets with SET SESSION
        # TRANSACTION ISOLATION LEVEL, and the driver-level autocommit.
        for level in ["READ COMMITTED", "REPEATABLE READ", "AUTOCOMMIT"]:
            with self.engine.connect().execution_options(isolation_level=level) as conn:
                if level != "AUTOCOMMIT":
                    self.assertEqual(conn.get_isolation_level(), level)
                self.assertEqual(conn.scalar(select(func.count()).select_from(Book)), 5)


def make_driver_case(driver):
    url = f"mysql+{driver}://root:@{HOST}:{PORT}/{DB}?charset=utf8mb4"
    return type(f"Test_{driver}", (OrmTests, unittest.TestCase), {"URL": url})


for _d in DRIVERS:
    globals()[f"Test_{_d}"] = make_driver_case(_d)

if __name__ == "__main__":
    unittest.main()
