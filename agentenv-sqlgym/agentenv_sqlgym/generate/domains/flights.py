"""Flights: airports, airlines, flights between airports, passengers and their bookings."""

from __future__ import annotations

import datetime as dt
import random
import sqlite3
import string

from ..families import Ask, lit
from ..spec import Attribute, Domain, Draft, Entity, Link
from ..values import Vocabulary, day, iso, lognormal, picker, unique, weighted

DDL = """
CREATE TABLE airports (
    airport_code TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    city TEXT NOT NULL,
    country TEXT NOT NULL
);
CREATE TABLE airlines (
    airline_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    country TEXT NOT NULL,
    founded_year INTEGER NOT NULL
);
CREATE TABLE flights (
    flight_id INTEGER PRIMARY KEY,
    flight_number TEXT NOT NULL,
    airline_id INTEGER NOT NULL REFERENCES airlines (airline_id),
    origin_code TEXT NOT NULL REFERENCES airports (airport_code),
    destination_code TEXT NOT NULL REFERENCES airports (airport_code),
    departure_date TEXT NOT NULL,
    scheduled_minutes INTEGER NOT NULL,
    delay_minutes INTEGER,
    status TEXT NOT NULL
);
CREATE TABLE passengers (
    passenger_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    nationality TEXT NOT NULL,
    birth_date TEXT NOT NULL,
    frequent_flyer_tier TEXT
);
CREATE TABLE bookings (
    booking_id INTEGER PRIMARY KEY,
    flight_id INTEGER NOT NULL REFERENCES flights (flight_id),
    passenger_id INTEGER NOT NULL REFERENCES passengers (passenger_id),
    seat_class TEXT NOT NULL,
    price REAL NOT NULL,
    booked_on TEXT NOT NULL
);
CREATE INDEX flights_airline ON flights (airline_id);
CREATE INDEX flights_origin ON flights (origin_code);
CREATE INDEX flights_destination ON flights (destination_code);
CREATE INDEX bookings_flight ON bookings (flight_id);
CREATE INDEX bookings_passenger ON bookings (passenger_id);
"""

AIRLINE_WORDS = [
    "Blue Sky",
    "Northwind",
    "Coastal",
    "Summit",
    "Aurora",
    "Meridian",
    "Horizon",
    "Falcon",
    "Polar",
    "Sunrise",
    "Evergreen",
    "Atlas",
    "Skyline",
    "Pacific Crest",
]
AIRPORT_KINDS = ["International", "Regional", "Municipal", "Field"]
SEATS = {"economy": 75, "premium economy": 12, "business": 10, "first": 3}
SEAT_PRICE = {"economy": 1.0, "premium economy": 1.6, "business": 3.5, "first": 6.0}
TIERS = {"silver": 55, "gold": 30, "platinum": 15}


def populate(db: sqlite3.Connection, rng: random.Random, words: Vocabulary) -> None:
    countries = list(words.countries[:8])
    codes = unique(rng, lambda r: "".join(r.choices(string.ascii_uppercase, k=3)), 30)
    airports = []
    for code, city in zip(codes, words.cities[:30], strict=False):
        airports.append((code, f"{city} {rng.choice(AIRPORT_KINDS)}", city, rng.choice(countries)))
    db.executemany("INSERT INTO airports VALUES (?, ?, ?, ?)", airports)

    airlines = []
    for aid, word in enumerate(rng.sample(AIRLINE_WORDS, 12), start=1):
        airlines.append(
            (
                aid,
                f"{word} {rng.choice(('Air', 'Airways', 'Airlines'))}",
                rng.choice(countries),
                rng.randint(1950, 2015),
            )
        )
    db.executemany("INSERT INTO airlines VALUES (?, ?, ?, ?)", airlines)

    hubs = [rng.paretovariate(1.5) for _ in airports]
    routes = []
    for airline in airlines:
        prefix = "".join(w[0] for w in airline[1].split())[:2].upper()
        for n in range(rng.randint(10, 25)):
            origin, destination = rng.choices(airports, hubs, k=2)
            if origin != destination:
                routes.append(
                    (
                        airline[0],
                        f"{prefix}{100 + 37 * n + airline[0]}",
                        origin[0],
                        destination[0],
                        rng.randint(45, 720),
                    )
                )
    flights = []
    for fid in range(1, 3001):
        airline, number, origin, destination, minutes = rng.choice(routes)
        departure = day(rng, dt.date(2023, 1, 1), dt.date(2024, 12, 31))
        roll = rng.random()
        if roll < 0.03:
            status, delay = "cancelled", None
        elif roll < 0.28:
            status, delay = "delayed", 15 + int(rng.expovariate(1 / 40))
        else:
            status, delay = "on time", rng.randint(0, 14)
        flights.append((fid, number, airline, origin, destination, iso(departure), minutes, delay, status))
    db.executemany("INSERT INTO flights VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", flights)

    nationalities = {c: 1 / (i + 1) for i, c in enumerate(words.countries[:15])}
    passengers = []
    for pid in range(1, 2001):
        born = day(rng, dt.date(1940, 1, 1), dt.date(2015, 12, 31))
        tier = weighted(rng, TIERS) if rng.random() < 0.35 else None
        passengers.append((pid, words.person(rng), weighted(rng, nationalities), iso(born), tier))
    db.executemany("INSERT INTO passengers VALUES (?, ?, ?, ?, ?)", passengers)

    traveller = picker(
        rng, passengers, [0.0 if rng.random() < 0.08 else rng.paretovariate(1.8) for _ in passengers]
    )
    bookings = []
    for bid in range(1, 9001):
        flight, passenger = rng.choice(flights), traveller()[0]
        seat = weighted(rng, SEATS)
        price = round(lognormal(rng, 60 + flight[6] * 0.35, 0.25) * SEAT_PRICE[seat], 2)
        booked = dt.date.fromisoformat(flight[5]) - dt.timedelta(days=int(rng.expovariate(1 / 30)))
        bookings.append((bid, flight[0], passenger[0], seat, price, iso(booked)))
    db.executemany("INSERT INTO bookings VALUES (?, ?, ?, ?, ?, ?)", bookings)


# --- questions of this domain -----------------------------------------------------------------------------

_ROUTE = (
    "flights AS T1 INNER JOIN airports AS T2 ON T1.origin_code = T2.airport_code "
    "INNER JOIN airports AS T3 ON T1.destination_code = T3.airport_code"
)


def route_flights(ask: Ask) -> Draft | None:
    origin, destination = ask.pick(
        ask.rows(
            f"SELECT T2.city, T3.city FROM {_ROUTE} GROUP BY T2.city, T3.city HAVING COUNT(*) >= 3 ORDER BY 1, 2"
        )
    )
    year = ask.pick(["2023", "2024"])
    route = f"T2.city = {lit(origin)} AND T3.city = {lit(destination)}"
    in_year = f"strftime('%Y', T1.departure_date) = {lit(year)}"
    return Draft(
        question=f"How many flights went from {origin} to {destination} in {year}?",
        sql=f"SELECT COUNT(*) FROM {_ROUTE} WHERE {route} AND {in_year}",
        near_miss=f"SELECT COUNT(*) FROM {_ROUTE} WHERE T2.city = {lit(destination)} AND T3.city = {lit(origin)} AND {in_year}",
        wrong=(f"SELECT COUNT(*) FROM {_ROUTE} WHERE {route}",),
        kind="join",
        difficulty="challenging",
        evidence="from refers to origin_code, to refers to destination_code",
        thought="The airports table joins twice, once as origin and once as destination, each with its own alias.",
    )


def airline_delay(ask: Ask) -> Draft | None:
    airline = ask.pick(ask.values("airlines", "name"))
    year = ask.pick(["2023", "2024"])
    joins = "flights AS T1 INNER JOIN airlines AS T2 ON T1.airline_id = T2.airline_id"
    of = f"T2.name = {lit(airline)} AND strftime('%Y', T1.departure_date) = {lit(year)}"
    return Draft(
        question=f"What was the average delay, in minutes, of {airline}'s flights that departed in {year}? Cancelled "
        "flights have no delay; round to two decimals.",
        sql=f"SELECT ROUND(AVG(T1.delay_minutes), 2) FROM {joins} WHERE {of}",
        near_miss=f"SELECT ROUND(AVG(T1.delay_minutes), 2) FROM {joins} WHERE {of} AND T1.status = 'delayed'",
        wrong=(f"SELECT ROUND(AVG(T1.delay_minutes), 2) FROM {joins} WHERE T2.name = {lit(airline)}",),
        kind="aggregate",
        difficulty="moderate",
        thought="AVG over the airline's flights of that year; AVG skips the NULL delays of cancelled flights.",
    )


def cancellation_rate(ask: Ask) -> Draft | None:
    airline = ask.pick(ask.values("airlines", "name"))
    joins = "flights AS T1 INNER JOIN airlines AS T2 ON T1.airline_id = T2.airline_id"
    cancelled = "SUM(CASE WHEN T1.status = 'cancelled' THEN 1 ELSE 0 END)"
    return Draft(
        question=f"What percentage of {airline}'s flights were cancelled? Round to two decimals.",
        sql=f"SELECT ROUND(CAST({cancelled} AS REAL) * 100 / COUNT(*), 2) FROM {joins} WHERE T2.name = {lit(airline)}",
        near_miss=f"SELECT ROUND({cancelled} * 100 / COUNT(*), 2) FROM {joins} WHERE T2.name = {lit(airline)}",
        wrong=(f"SELECT ROUND(CAST({cancelled} AS REAL) * 100 / COUNT(*), 2) FROM {joins}",),
        kind="aggregate",
        difficulty="challenging",
        evidence="percentage refers to CAST(SUM(status = 'cancelled') AS REAL) * 100 / COUNT(*)",
        thought="Count the cancelled flights with a CASE inside SUM, as a REAL so the division keeps its decimals.",
    )


def business_travellers(ask: Ask) -> Draft | None:
    seat = ask.pick(["business", "first"])
    city = ask.pick(ask.values("airports", "city"))
    joins = (
        "FROM passengers AS T1 INNER JOIN bookings AS T2 ON T1.passenger_id = T2.passenger_id "
        "INNER JOIN flights AS T3 ON T2.flight_id = T3.flight_id INNER JOIN airports AS T4 ON T3.origin_code = T4.airport_code"
    )
    return Draft(
        question=f"List the names of the passengers who flew {seat} class on a flight departing from {city}.",
        sql=f"SELECT DISTINCT T1.name {joins} WHERE T2.seat_class = {lit(seat)} AND T4.city = {lit(city)}",
        near_miss=f"SELECT DISTINCT T1.name {joins.replace('T3.origin_code', 'T3.destination_code')} "
        f"WHERE T2.seat_class = {lit(seat)} AND T4.city = {lit(city)}",
        wrong=(f"SELECT DISTINCT T1.name {joins} WHERE T4.city = {lit(city)}",),
        kind="join",
        difficulty="challenging",
        thought="Passengers, their bookings (seat class), the booked flights and their origin airport (city).",
    )


DOMAIN = Domain(
    name="flights",
    ddl=DDL,
    populate=populate,
    entities=(
        Entity(
            "airports",
            "airport_code",
            "airport",
            "airports",
            label="name",
            categories=(Attribute("country", "country"),),
        ),
        Entity(
            "airlines",
            "airline_id",
            "airline",
            "airlines",
            label="name",
            numbers=(Attribute("founded_year", "founding year"),),
            categories=(Attribute("country", "country"),),
        ),
        Entity(
            "flights",
            "flight_id",
            "flight",
            "flights",
            numbers=(
                Attribute("scheduled_minutes", "scheduled duration in minutes"),
                Attribute("delay_minutes", "delay in minutes"),
            ),
            categories=(Attribute("status", "status"),),
            dates=(Attribute("departure_date", "departure date"),),
            optional=(Attribute("delay_minutes", "delay"),),
        ),
        Entity(
            "passengers",
            "passenger_id",
            "passenger",
            "passengers",
            label="name",
            categories=(
                Attribute("nationality", "nationality"),
                Attribute("frequent_flyer_tier", "frequent flyer tier"),
            ),
            dates=(Attribute("birth_date", "birth date"),),
            optional=(Attribute("frequent_flyer_tier", "frequent flyer tier"),),
        ),
        Entity(
            "bookings",
            "booking_id",
            "booking",
            "bookings",
            numbers=(Attribute("price", "price"),),
            categories=(Attribute("seat_class", "seat class"),),
            dates=(Attribute("booked_on", "booking date"),),
        ),
    ),
    links=(
        Link("flights", "airline_id", "airlines", "airline"),
        Link("flights", "origin_code", "airports", "origin airport"),
        Link("flights", "destination_code", "airports", "destination airport"),
        Link("bookings", "flight_id", "flights"),
        Link("bookings", "passenger_id", "passengers", "passenger"),
    ),
    templates=(route_flights, airline_delay, cancellation_rate, business_travellers),
)
