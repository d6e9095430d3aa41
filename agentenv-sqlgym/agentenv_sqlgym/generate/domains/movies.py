"""Movies: directors, movies, actors cast in them, and reviews of the movies."""

from __future__ import annotations

import datetime as dt
import random
import sqlite3

from ..families import Ask, lit, quoted
from ..spec import Attribute, Bridge, Domain, Draft, Entity, Link
from ..values import Vocabulary, day, iso, lognormal, picker, unique, weighted

DDL = """
CREATE TABLE directors (
    director_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    birth_year INTEGER NOT NULL,
    country TEXT NOT NULL
);
CREATE TABLE movies (
    movie_id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    director_id INTEGER NOT NULL REFERENCES directors (director_id),
    release_year INTEGER NOT NULL,
    genre TEXT NOT NULL,
    language TEXT NOT NULL,
    runtime_minutes INTEGER NOT NULL,
    budget_musd REAL,
    gross_musd REAL
);
CREATE TABLE actors (
    actor_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    gender TEXT NOT NULL,
    birth_year INTEGER NOT NULL,
    country TEXT NOT NULL
);
CREATE TABLE castings (
    casting_id INTEGER PRIMARY KEY,
    movie_id INTEGER NOT NULL REFERENCES movies (movie_id),
    actor_id INTEGER NOT NULL REFERENCES actors (actor_id),
    character_name TEXT NOT NULL,
    billing INTEGER NOT NULL
);
CREATE TABLE reviews (
    review_id INTEGER PRIMARY KEY,
    movie_id INTEGER NOT NULL REFERENCES movies (movie_id),
    reviewer TEXT NOT NULL,
    stars INTEGER NOT NULL,
    reviewed_on TEXT NOT NULL
);
CREATE INDEX movies_director ON movies (director_id);
CREATE INDEX castings_movie ON castings (movie_id);
CREATE INDEX castings_actor ON castings (actor_id);
CREATE INDEX reviews_movie ON reviews (movie_id);
"""

GENRES = {
    "drama": 25,
    "comedy": 20,
    "action": 15,
    "thriller": 12,
    "horror": 8,
    "romance": 8,
    "animation": 6,
    "documentary": 6,
}
LANGUAGES = {"English": 70, "French": 8, "Spanish": 8, "Japanese": 5, "Korean": 5, "German": 4}
WORDS = [
    "Midnight",
    "Echo",
    "Storm",
    "Paper",
    "Silver",
    "Iron",
    "Last",
    "Blue",
    "Neon",
    "Wild",
    "Broken",
    "Hidden",
    "Velvet",
    "Falling",
    "Crimson",
    "Electric",
    "Lonely",
    "Burning",
]
THINGS = [
    "Heart",
    "City",
    "Road",
    "Moon",
    "Dream",
    "Signal",
    "Line",
    "Horizon",
    "Garden",
    "Protocol",
    "Summer",
    "Machine",
    "Ghost",
    "Highway",
    "Island",
    "Kingdom",
    "Tide",
    "Frontier",
    "Mirror",
    "Hour",
]


def _title(rng: random.Random) -> str:
    word, thing = rng.choice(WORDS), rng.choice(THINGS)
    return rng.choice(
        [
            f"{word} {thing}",
            f"The {word} {thing}",
            f"{thing} of the {rng.choice(THINGS)}",
            f"{word} {thing} II",
        ]
    )


def populate(db: sqlite3.Connection, rng: random.Random, words: Vocabulary) -> None:
    countries = {c: 1 / (i + 1) for i, c in enumerate(words.countries[:10])}
    directors = [
        (i, words.person(rng), rng.randint(1930, 1990), weighted(rng, countries)) for i in range(1, 151)
    ]
    db.executemany("INSERT INTO directors VALUES (?, ?, ?, ?)", directors)

    busy = picker(rng, directors, [rng.paretovariate(1.5) for _ in directors])
    movies = []
    for mid, title in enumerate(unique(rng, _title, 1000), start=1):
        director = busy()[0]
        genre = weighted(rng, GENRES)
        budget = lognormal(rng, 25, 0.9, 1) if rng.random() < 0.8 else None
        gross = round(budget * lognormal(rng, 1.6, 0.8), 1) if budget and rng.random() < 0.85 else None
        runtime = int(rng.gauss(95 if genre == "animation" else 112, 16))
        movies.append(
            (
                mid,
                title,
                director[0],
                min(2024, director[2] + rng.randint(25, 60)),
                genre,
                weighted(rng, LANGUAGES),
                runtime,
                budget,
                gross,
            )
        )
    db.executemany("INSERT INTO movies VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", movies)

    actors = []
    for aid in range(1, 901):
        gender = rng.choice("FM")
        actors.append(
            (aid, words.person(rng, gender), gender, rng.randint(1935, 2005), weighted(rng, countries))
        )
    db.executemany("INSERT INTO actors VALUES (?, ?, ?, ?, ?)", actors)

    famous = picker(rng, actors, [0.0 if rng.random() < 0.05 else rng.paretovariate(1.3) for _ in actors])
    castings = []
    for movie in movies:
        cast = {a[0]: a for a in famous(rng.randint(3, 8))}
        for billing, actor in enumerate(cast.values(), start=1):
            role = f"{rng.choice(words.female_first_names if actor[2] == 'F' else words.male_first_names)}"
            castings.append((len(castings) + 1, movie[0], actor[0], role, billing))
    db.executemany("INSERT INTO castings VALUES (?, ?, ?, ?, ?)", castings)

    quality = {m[0]: rng.gauss(3.2, 0.8) for m in movies}
    reviews = []
    for rid in range(1, 6001):
        movie = rng.choice(movies)
        stars = max(1, min(5, round(rng.gauss(quality[movie[0]], 0.9))))
        reviewed = day(rng, dt.date(max(2000, movie[3]), 1, 1), dt.date(2024, 12, 31))
        reviews.append(
            (
                rid,
                movie[0],
                f"{rng.choice(words.surnames).lower()}{rng.randint(1, 999)}",
                stars,
                iso(reviewed),
            )
        )
    db.executemany("INSERT INTO reviews VALUES (?, ?, ?, ?, ?)", reviews)


# --- questions of this domain -----------------------------------------------------------------------------


def most_profitable(ask: Ask) -> Draft | None:
    genre = ask.pick(sorted(GENRES))
    k = ask.pick([1, 3])
    profit = "gross_musd - budget_musd"
    tail = f"FROM movies WHERE genre = {lit(genre)} AND {profit} IS NOT NULL ORDER BY {profit} DESC"
    return Draft(
        question=f"Which {'movie' if k == 1 else f'{k} movies'} of the genre {quoted(genre)} made the largest profit "
        "(gross minus budget)? Give the title" + ("." if k == 1 else "s."),
        sql=f"SELECT title {tail} LIMIT {k}",
        near_miss=f"SELECT title {tail.replace(f'{profit} DESC', 'gross_musd DESC')} LIMIT {k}",
        wrong=(f"SELECT title {tail.replace(f'genre = {lit(genre)} AND ', '')} LIMIT {k}",),
        ranking=(f"SELECT {profit} {tail}", k),
        kind="order_limit",
        difficulty="moderate",
        evidence="profit refers to gross_musd - budget_musd",
        thought="Profit is gross_musd - budget_musd; movies missing either are left out (the difference is NULL).",
    )


def director_rating(ask: Ask) -> Draft | None:
    name = ask.pick(ask.unique_labels(ask.domain.entity("directors")))
    joins = "FROM reviews AS T1 INNER JOIN movies AS T2 ON T1.movie_id = T2.movie_id INNER JOIN directors AS T3 ON T2.director_id = T3.director_id"
    return Draft(
        question=f"What is the average number of stars of the reviews of the movies directed by {quoted(name)}? "
        "Round to two decimals.",
        sql=f"SELECT ROUND(AVG(T1.stars), 2) {joins} WHERE T3.name = {lit(name)}",
        near_miss=f"SELECT ROUND(AVG(T1.stars), 2) {joins.replace('T1.movie_id = T2.movie_id', 'T1.review_id = T2.movie_id')} "
        f"WHERE T3.name = {lit(name)}",
        wrong=(f"SELECT ROUND(AVG(T1.stars), 2) {joins}",),
        kind="aggregate",
        difficulty="challenging",
        thought="Reviews to movies to directors; average the stars of that director's movies.",
    )


def lead_roles(ask: Ask) -> Draft | None:
    name = ask.pick(ask.unique_labels(ask.domain.entity("actors")))
    joins = "FROM castings AS T1 INNER JOIN movies AS T2 ON T1.movie_id = T2.movie_id INNER JOIN actors AS T3 ON T1.actor_id = T3.actor_id"
    return Draft(
        question=f"In which movies did {quoted(name)} play the lead (first billing)? List the titles.",
        sql=f"SELECT T2.title {joins} WHERE T3.name = {lit(name)} AND T1.billing = 1",
        near_miss=f"SELECT T2.title {joins} WHERE T3.name = {lit(name)} AND T1.billing > 1",
        wrong=(f"SELECT T2.title {joins} WHERE T3.name = {lit(name)}",),
        kind="join",
        difficulty="moderate",
        evidence="the lead refers to billing = 1",
        thought="Castings link actors to movies; the lead is the casting with billing = 1.",
    )


def worked_with(ask: Ask) -> Draft | None:
    name = ask.pick(ask.unique_labels(ask.domain.entity("directors")))
    joins = (
        "FROM actors AS T1 INNER JOIN castings AS T2 ON T1.actor_id = T2.actor_id INNER JOIN movies AS T3 ON T2.movie_id = T3.movie_id "
        "INNER JOIN directors AS T4 ON T3.director_id = T4.director_id"
    )
    gender = ask.pick(["F", "M"])
    return Draft(
        question=f"List the names of the {'actresses' if gender == 'F' else 'male actors'} who appeared in a movie "
        f"directed by {quoted(name)}.",
        sql=f"SELECT DISTINCT T1.name {joins} WHERE T4.name = {lit(name)} AND T1.gender = {lit(gender)}",
        near_miss=f"SELECT DISTINCT T1.name {joins} WHERE T4.name = {lit(name)} AND T1.gender <> {lit(gender)}",
        wrong=(f"SELECT DISTINCT T1.name {joins} WHERE T4.name = {lit(name)}",),
        kind="join",
        difficulty="challenging",
        evidence=f"{'actresses' if gender == 'F' else 'male actors'} refers to gender = {lit(gender)}",
        thought="Actors to castings to movies to directors: four tables; DISTINCT as an actor may appear twice.",
    )


DOMAIN = Domain(
    name="movies",
    ddl=DDL,
    populate=populate,
    entities=(
        Entity(
            "directors",
            "director_id",
            "director",
            "directors",
            label="name",
            numbers=(Attribute("birth_year", "birth year"),),
            categories=(Attribute("country", "country"),),
        ),
        Entity(
            "movies",
            "movie_id",
            "movie",
            "movies",
            label="title",
            label_phrase="title",
            named="titled",
            numbers=(
                Attribute("release_year", "release year"),
                Attribute("runtime_minutes", "running time in minutes"),
                Attribute("budget_musd", "budget in million dollars"),
                Attribute("gross_musd", "box-office gross in million dollars"),
            ),
            categories=(Attribute("genre", "genre"), Attribute("language", "language")),
            optional=(Attribute("budget_musd", "budget"), Attribute("gross_musd", "box-office gross")),
        ),
        Entity(
            "actors",
            "actor_id",
            "actor",
            "actors",
            label="name",
            numbers=(Attribute("birth_year", "birth year"),),
            categories=(Attribute("gender", "gender"), Attribute("country", "country")),
        ),
        Entity(
            "castings",
            "casting_id",
            "casting",
            "castings",
            numbers=(Attribute("billing", "billing position"),),
        ),
        Entity(
            "reviews",
            "review_id",
            "review",
            "reviews",
            numbers=(Attribute("stars", "number of stars"),),
            dates=(Attribute("reviewed_on", "review date"),),
        ),
    ),
    links=(
        Link("movies", "director_id", "directors", "director"),
        Link("castings", "movie_id", "movies", "movie"),
        Link("castings", "actor_id", "actors", "actor"),
        Link("reviews", "movie_id", "movies", "movie"),
    ),
    bridges=(
        Bridge(
            "castings",
            Link("castings", "movie_id", "movies"),
            Link("castings", "actor_id", "actors"),
            rights_of_left="List the names of the actors cast in the movie {v}.",
            lefts_of_right="List the titles of the movies the actor {v} was cast in.",
        ),
    ),
    templates=(most_profitable, director_rating, lead_roles, worked_with),
)
