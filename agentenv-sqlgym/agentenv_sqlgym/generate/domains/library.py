"""Library: authors, their books, members and the loans of books to members."""

from __future__ import annotations

import datetime as dt
import random
import sqlite3

from ..families import Ask, lit, quoted
from ..spec import Attribute, Bridge, Domain, Draft, Entity, Link
from ..values import Vocabulary, day, iso, picker, unique, weighted

DDL = """
CREATE TABLE authors (
    author_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    birth_year INTEGER NOT NULL,
    country TEXT NOT NULL
);
CREATE TABLE books (
    book_id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    author_id INTEGER NOT NULL REFERENCES authors (author_id),
    genre TEXT NOT NULL,
    published_year INTEGER NOT NULL,
    pages INTEGER NOT NULL,
    isbn TEXT NOT NULL
);
CREATE TABLE members (
    member_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    joined_on TEXT NOT NULL,
    city TEXT NOT NULL,
    email TEXT,
    membership TEXT NOT NULL
);
CREATE TABLE loans (
    loan_id INTEGER PRIMARY KEY,
    book_id INTEGER NOT NULL REFERENCES books (book_id),
    member_id INTEGER NOT NULL REFERENCES members (member_id),
    loaned_on TEXT NOT NULL,
    due_on TEXT NOT NULL,
    returned_on TEXT
);
CREATE INDEX books_author ON books (author_id);
CREATE INDEX loans_book ON loans (book_id);
CREATE INDEX loans_member ON loans (member_id);
"""

ADJECTIVES = [
    "Silent",
    "Broken",
    "Golden",
    "Hidden",
    "Last",
    "Lost",
    "Northern",
    "Quiet",
    "Red",
    "Secret",
    "Distant",
    "Burning",
    "Winter",
    "Glass",
    "Wild",
    "Hollow",
    "Final",
    "Endless",
]
NOUNS = [
    "River",
    "Garden",
    "House",
    "Sea",
    "Mountain",
    "Letter",
    "Island",
    "Forest",
    "Kingdom",
    "Promise",
    "Shadow",
    "Voyage",
    "Orchard",
    "Harbor",
    "Mirror",
    "Empire",
    "Summer",
    "Bridge",
    "Lantern",
    "Crown",
]
GENRES = {
    "fiction": 30,
    "mystery": 15,
    "science fiction": 10,
    "fantasy": 10,
    "history": 10,
    "biography": 8,
    "poetry": 5,
    "romance": 7,
    "science": 5,
}
MEMBERSHIPS = {"standard": 65, "student": 20, "senior": 15}


def _title(rng: random.Random) -> str:
    form = rng.randrange(4)
    adjective, noun, other = rng.choice(ADJECTIVES), rng.choice(NOUNS), rng.choice(NOUNS)
    return [
        f"The {adjective} {noun}",
        f"{noun} of the {other}",
        f"A {adjective} {noun}",
        f"The {noun} and the {other}",
    ][form]


def populate(db: sqlite3.Connection, rng: random.Random, words: Vocabulary) -> None:
    countries = {c: 1 / (i + 1) for i, c in enumerate(words.countries[:12])}
    authors = [
        (aid, words.person(rng), rng.randint(1900, 1995), weighted(rng, countries)) for aid in range(1, 301)
    ]
    db.executemany("INSERT INTO authors VALUES (?, ?, ?, ?)", authors)

    prolific = picker(rng, authors, [rng.paretovariate(1.2) for _ in authors])
    books = []
    for bid, title in enumerate(unique(rng, _title, 1200), start=1):
        author = prolific()[0]
        year = min(2024, author[2] + rng.randint(22, 70))
        isbn = (
            f"978-{rng.randint(0, 9)}-{rng.randint(1000, 9999)}-{rng.randint(1000, 9999)}-{rng.randint(0, 9)}"
        )
        books.append(
            (bid, title, author[0], weighted(rng, GENRES), year, max(48, int(rng.gauss(320, 110))), isbn)
        )
    db.executemany("INSERT INTO books VALUES (?, ?, ?, ?, ?, ?, ?)", books)

    cities = list(words.cities[:6])
    members = []
    for mid in range(1, 901):
        name = words.person(rng)
        joined = day(rng, dt.date(2010, 1, 1), dt.date(2024, 6, 30))
        email = words.email(rng, name) if rng.random() < 0.75 else None
        members.append(
            (
                mid,
                name,
                iso(joined),
                rng.choices(cities, [6, 5, 4, 3, 2, 1])[0],
                email,
                weighted(rng, MEMBERSHIPS),
            )
        )
    db.executemany("INSERT INTO members VALUES (?, ?, ?, ?, ?, ?)", members)

    reader = picker(rng, members, [0.0 if rng.random() < 0.1 else rng.paretovariate(1.6) for _ in members])
    popular = picker(rng, books, [0.0 if rng.random() < 0.06 else rng.paretovariate(1.4) for _ in books])
    loans = []
    for lid in range(1, 6001):
        member, book = reader()[0], popular()[0]
        loaned = day(rng, max(dt.date(2019, 1, 1), dt.date.fromisoformat(member[2])), dt.date(2024, 12, 31))
        due = loaned + dt.timedelta(days=21)
        if loaned > dt.date(2024, 11, 30) or rng.random() < 0.03:
            returned = None
        else:
            returned = iso(
                loaned + dt.timedelta(days=rng.randint(2, 18) if rng.random() < 0.8 else rng.randint(19, 60))
            )
        loans.append((lid, book[0], member[0], iso(loaned), iso(due), returned))
    db.executemany("INSERT INTO loans VALUES (?, ?, ?, ?, ?, ?)", loans)


# --- questions of this domain -----------------------------------------------------------------------------

_LENT = "loans AS T1 INNER JOIN books AS T2 ON T1.book_id = T2.book_id"


def late_returns(ask: Ask) -> Draft | None:
    genre = ask.pick(sorted(GENRES))
    late = "T1.returned_on > T1.due_on"
    return Draft(
        question=f"How many loans of {genre} books were returned after their due date?",
        sql=f"SELECT COUNT(*) FROM {_LENT} WHERE T2.genre = {lit(genre)} AND {late}",
        near_miss=f"SELECT COUNT(*) FROM {_LENT} WHERE T2.genre = {lit(genre)} AND T1.returned_on >= T1.loaned_on",
        wrong=(f"SELECT COUNT(*) FROM {_LENT} WHERE {late}",),
        kind="join",
        difficulty="moderate",
        evidence="returned after the due date refers to returned_on > due_on",
        thought="ISO dates compare as text: returned_on > due_on; the genre is on books, so join loans to books.",
    )


def not_returned_by(ask: Ask) -> Draft | None:
    name = ask.pick(ask.unique_labels(ask.domain.entity("members")))
    joins = f"{_LENT} INNER JOIN members AS T3 ON T1.member_id = T3.member_id"
    return Draft(
        question=f"Which books has the member {quoted(name)} borrowed and not returned yet? List their titles.",
        sql=f"SELECT T2.title FROM {joins} WHERE T3.name = {lit(name)} AND T1.returned_on IS NULL",
        near_miss=f"SELECT T2.title FROM {joins} WHERE T3.name = {lit(name)} AND T1.returned_on IS NOT NULL",
        kind="join",
        difficulty="moderate",
        evidence="not returned refers to returned_on IS NULL",
        thought="Loans of that member (joined through members) whose returned_on is NULL, with the book titles.",
    )


def genre_by_decade(ask: Ask) -> Draft | None:
    decade = ask.pick(list(range(1950, 2030, 10)))
    body = f"SELECT genre, ROUND(AVG(pages), 1) FROM books WHERE published_year BETWEEN {decade} AND {decade + 9} GROUP BY genre"
    return Draft(
        question=f"For the books published in the {decade}s, give each genre and the average number of pages, "
        "rounded to one decimal.",
        sql=body,
        near_miss=body.replace("AVG(pages)", "AVG(published_year)"),
        wrong=("SELECT genre, ROUND(AVG(pages), 1) FROM books GROUP BY genre",),
        kind="aggregate",
        difficulty="moderate",
        evidence=f"the {decade}s refers to published_year BETWEEN {decade} AND {decade + 9}",
        thought="Filter the decade, group by genre, average the pages.",
    )


def most_borrowed_author(ask: Ask) -> Draft | None:
    city = ask.pick(ask.values("members", "city"))
    tail = (
        "FROM loans AS T1 INNER JOIN books AS T2 ON T1.book_id = T2.book_id INNER JOIN authors AS T3 ON T2.author_id = T3.author_id "
        f"INNER JOIN members AS T4 ON T1.member_id = T4.member_id WHERE T4.city = {lit(city)} GROUP BY T3.author_id ORDER BY COUNT(*) DESC"
    )
    return Draft(
        question=f"Whose books were borrowed most often by the members living in {city}? Give the author's name.",
        sql=f"SELECT T3.name {tail} LIMIT 1",
        near_miss=f"SELECT T3.name {tail.replace('DESC', 'ASC')} LIMIT 1",
        wrong=(f"SELECT T3.name {tail.replace(f'WHERE T4.city = {lit(city)} ', '')} LIMIT 1",),
        ranking=(f"SELECT COUNT(*) {tail}", 1),
        kind="order_limit",
        difficulty="challenging",
        thought="Loans to books to authors, and to members for the city; count per author, the largest first.",
    )


DOMAIN = Domain(
    name="library",
    ddl=DDL,
    populate=populate,
    entities=(
        Entity(
            "authors",
            "author_id",
            "author",
            "authors",
            label="name",
            numbers=(Attribute("birth_year", "birth year"),),
            categories=(Attribute("country", "country"),),
        ),
        Entity(
            "books",
            "book_id",
            "book",
            "books",
            label="title",
            label_phrase="title",
            named="titled",
            numbers=(Attribute("pages", "number of pages"), Attribute("published_year", "publication year")),
            categories=(Attribute("genre", "genre"),),
        ),
        Entity(
            "members",
            "member_id",
            "member",
            "members",
            label="name",
            categories=(Attribute("city", "city"), Attribute("membership", "membership")),
            dates=(Attribute("joined_on", "joining date"),),
            optional=(Attribute("email", "email address"),),
        ),
        Entity(
            "loans",
            "loan_id",
            "loan",
            "loans",
            dates=(Attribute("loaned_on", "loan date"), Attribute("due_on", "due date")),
            optional=(Attribute("returned_on", "return date"),),
        ),
    ),
    links=(
        Link("books", "author_id", "authors", "author"),
        Link("loans", "book_id", "books", "book"),
        Link("loans", "member_id", "members", "member"),
    ),
    bridges=(
        Bridge(
            "loans",
            Link("loans", "member_id", "members"),
            Link("loans", "book_id", "books"),
            rights_of_left="List the titles of the books the member {v} has borrowed.",
            lefts_of_right="List the names of the members who have borrowed the book {v}.",
        ),
    ),
    templates=(late_returns, not_returned_by, genre_by_decade, most_borrowed_author),
)
