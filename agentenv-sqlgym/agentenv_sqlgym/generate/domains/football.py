"""Football: a league's teams, players, three seasons of matches and every goal scored in them."""

from __future__ import annotations

import datetime as dt
import math
import random
import sqlite3

from ..families import Ask, lit
from ..spec import Attribute, Domain, Draft, Entity, Link
from ..values import Vocabulary, day, iso, lognormal, weighted

DDL = """
CREATE TABLE teams (
    team_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    city TEXT NOT NULL,
    founded_year INTEGER NOT NULL,
    stadium TEXT NOT NULL,
    capacity INTEGER NOT NULL
);
CREATE TABLE players (
    player_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    team_id INTEGER NOT NULL REFERENCES teams (team_id),
    position TEXT NOT NULL,
    birth_date TEXT NOT NULL,
    nationality TEXT NOT NULL,
    shirt_number INTEGER NOT NULL,
    market_value REAL
);
CREATE TABLE matches (
    match_id INTEGER PRIMARY KEY,
    season TEXT NOT NULL,
    match_date TEXT NOT NULL,
    home_team_id INTEGER NOT NULL REFERENCES teams (team_id),
    away_team_id INTEGER NOT NULL REFERENCES teams (team_id),
    home_goals INTEGER NOT NULL,
    away_goals INTEGER NOT NULL,
    attendance INTEGER
);
CREATE TABLE goals (
    goal_id INTEGER PRIMARY KEY,
    match_id INTEGER NOT NULL REFERENCES matches (match_id),
    player_id INTEGER NOT NULL REFERENCES players (player_id),
    minute INTEGER NOT NULL,
    kind TEXT NOT NULL
);
CREATE INDEX players_team ON players (team_id);
CREATE INDEX matches_home ON matches (home_team_id);
CREATE INDEX matches_away ON matches (away_team_id);
CREATE INDEX goals_match ON goals (match_id);
CREATE INDEX goals_player ON goals (player_id);
"""

SUFFIXES = ["FC", "United", "City", "Rovers", "Athletic", "Wanderers", "Albion", "Town"]
SQUAD = {"goalkeeper": 3, "defender": 8, "midfielder": 8, "forward": 6}
SCORING = {"goalkeeper": 0.02, "defender": 1.0, "midfielder": 3.0, "forward": 6.0}
GOAL_KINDS = {"open play": 75, "header": 12, "penalty": 10, "own goal": 3}
SEASONS = ["2021/22", "2022/23", "2023/24"]


def _poisson(rng: random.Random, mean: float) -> int:
    limit, k, p = math.exp(-mean), 0, rng.random()
    while p > limit:
        k += 1
        p *= rng.random()
    return k


def populate(db: sqlite3.Connection, rng: random.Random, words: Vocabulary) -> None:
    teams = []
    for tid, city in enumerate(words.cities[:20], start=1):
        suffix = rng.choice(SUFFIXES)
        capacity = int(lognormal(rng, 30000, 0.4, 0)) // 100 * 100
        teams.append(
            (
                tid,
                f"{city} {suffix}",
                city,
                rng.randint(1870, 1960),
                f"{rng.choice(words.surnames)} Park",
                capacity,
            )
        )
    db.executemany("INSERT INTO teams VALUES (?, ?, ?, ?, ?, ?)", teams)

    nationalities = {c: 1 / (i + 1) ** 0.8 for i, c in enumerate(words.countries[:20])}
    players, squads = [], {}
    for team in teams:
        numbers = rng.sample(range(1, 60), sum(SQUAD.values()))
        squads[team[0]] = []
        for position, count in SQUAD.items():
            for _ in range(count):
                pid = len(players) + 1
                born = day(rng, dt.date(1987, 1, 1), dt.date(2005, 12, 31))
                value = lognormal(
                    rng, {"goalkeeper": 4, "defender": 7, "midfielder": 10, "forward": 14}[position], 0.7, 1
                )
                player = (
                    pid,
                    words.person(rng, "M"),
                    team[0],
                    position,
                    iso(born),
                    weighted(rng, nationalities),
                    numbers.pop(),
                    value if rng.random() < 0.9 else None,
                )
                players.append(player)
                squads[team[0]].append(player)
    db.executemany("INSERT INTO players VALUES (?, ?, ?, ?, ?, ?, ?, ?)", players)

    strength = {t[0]: rng.gauss(1.0, 0.25) for t in teams}
    matches, goals = [], []
    for s, season in enumerate(SEASONS):
        start = dt.date(2021 + s, 8, 7)
        for home in teams:
            for away in teams:
                if home == away:
                    continue
                mid = len(matches) + 1
                played = day(rng, start, start + dt.timedelta(days=280))
                home_goals = _poisson(rng, 1.5 * strength[home[0]] / strength[away[0]])
                away_goals = _poisson(rng, 1.1 * strength[away[0]] / strength[home[0]])
                crowd = min(home[5], int(home[5] * rng.uniform(0.6, 1.0))) if rng.random() < 0.95 else None
                matches.append((mid, season, iso(played), home[0], away[0], home_goals, away_goals, crowd))
                for scorer_team, conceding, n in ((home, away, home_goals), (away, home, away_goals)):
                    for _ in range(n):
                        kind = weighted(rng, GOAL_KINDS)
                        if kind == "own goal":  # credited to a defender of the other side
                            scorer = rng.choice([p for p in squads[conceding[0]] if p[3] == "defender"])
                        else:
                            squad = squads[scorer_team[0]]
                            scorer = rng.choices(squad, [SCORING[p[3]] for p in squad])[0]
                        minute = min(90 + rng.randint(0, 6), 1 + int(rng.random() * 93))
                        goals.append((len(goals) + 1, mid, scorer[0], minute, kind))
    db.executemany("INSERT INTO matches VALUES (?, ?, ?, ?, ?, ?, ?, ?)", matches)
    db.executemany("INSERT INTO goals VALUES (?, ?, ?, ?, ?)", goals)


# --- questions of this domain -----------------------------------------------------------------------------


def home_wins(ask: Ask) -> Draft | None:
    team = ask.pick(ask.values("teams", "name"))
    season = ask.pick(SEASONS)
    joins = "matches AS T1 INNER JOIN teams AS T2 ON T1.home_team_id = T2.team_id"
    of = f"T2.name = {lit(team)} AND T1.season = {lit(season)}"
    return Draft(
        question=f"How many home matches did {team} win in the {season} season?",
        sql=f"SELECT COUNT(*) FROM {joins} WHERE {of} AND T1.home_goals > T1.away_goals",
        near_miss=f"SELECT COUNT(*) FROM {joins} WHERE {of} AND T1.home_goals >= T1.away_goals",
        wrong=(f"SELECT COUNT(*) FROM {joins} WHERE {of}",),
        kind="join",
        difficulty="moderate",
        evidence="won at home refers to home_goals > away_goals",
        thought="Matches where the team is the home team (join on home_team_id) and scored more than the visitors.",
    )


def top_scorer(ask: Ask) -> Draft | None:
    season = ask.pick(SEASONS)
    position = ask.pick([None, "midfielder", "defender"])
    of = f"T3.season = {lit(season)} AND T1.kind <> 'own goal'" + (
        f" AND T2.position = {lit(position)}" if position else ""
    )
    tail = (
        "FROM goals AS T1 INNER JOIN players AS T2 ON T1.player_id = T2.player_id INNER JOIN matches AS T3 ON T1.match_id = T3.match_id "
        f"WHERE {of} GROUP BY T2.player_id ORDER BY COUNT(*) DESC"
    )
    who = f"Which {position}" if position else "Who"
    return Draft(
        question=f"{who} scored the most goals in the {season} season, own goals not counted? Give the player's name.",
        sql=f"SELECT T2.name {tail} LIMIT 1",
        near_miss=f"SELECT T2.name {tail.replace(' AND T1.kind <> ' + lit('own goal'), '')} LIMIT 1",
        wrong=(f"SELECT T2.name {tail.replace(f'T3.season = {lit(season)} AND ', '')} LIMIT 1",),
        ranking=(f"SELECT COUNT(*) {tail}", 1),
        kind="order_limit",
        difficulty="challenging",
        evidence="own goals refers to kind = 'own goal'",
        thought="Goals joined to their scorer and their match (for the season), own goals left out, counted per player.",
    )


def season_goals(ask: Ask) -> Draft | None:
    team = ask.pick(ask.values("teams", "name"))
    season = ask.pick(SEASONS)
    home = (
        "SELECT T1.home_goals AS scored FROM matches AS T1 INNER JOIN teams AS T2 ON T1.home_team_id = T2.team_id "
        f"WHERE T2.name = {lit(team)} AND T1.season = {lit(season)}"
    )
    away = home.replace("T1.home_goals", "T1.away_goals").replace("home_team_id", "away_team_id")
    return Draft(
        question=f"How many goals did {team} score in the {season} season, home and away matches together?",
        sql=f"SELECT SUM(scored) FROM ({home} UNION ALL {away})",
        near_miss=f"SELECT SUM(scored) FROM ({home} UNION {away})",
        wrong=(f"SELECT SUM(scored) FROM ({home})",),
        kind="set_operation",
        difficulty="challenging",
        thought="A team scores home_goals at home and away_goals away: UNION ALL the two (UNION would merge equal "
        "scores), then SUM.",
    )


def late_goals(ask: Ask) -> Draft | None:
    team = ask.pick(ask.values("teams", "name"))
    minute = ask.pick([75, 80, 85])
    joins = "goals AS T1 INNER JOIN matches AS T2 ON T1.match_id = T2.match_id INNER JOIN teams AS T3 ON T2.home_team_id = T3.team_id"
    return Draft(
        question=f"How many goals were scored after the {minute}th minute in the matches played at {team}'s home ground?",
        sql=f"SELECT COUNT(*) FROM {joins} WHERE T3.name = {lit(team)} AND T1.minute > {minute}",
        near_miss=f"SELECT COUNT(*) FROM {joins.replace('home_team_id', 'away_team_id')} WHERE T3.name = {lit(team)} AND T1.minute > {minute}",
        wrong=(f"SELECT COUNT(*) FROM {joins} WHERE T3.name = {lit(team)}",),
        kind="join",
        difficulty="challenging",
        evidence=f"after the {minute}th minute refers to minute > {minute}",
        thought="Goals to their match, the match to its home team; count the goals past the minute.",
    )


DOMAIN = Domain(
    name="football",
    ddl=DDL,
    populate=populate,
    entities=(
        Entity(
            "teams",
            "team_id",
            "team",
            "teams",
            label="name",
            numbers=(Attribute("founded_year", "founding year"), Attribute("capacity", "stadium capacity")),
        ),
        Entity(
            "players",
            "player_id",
            "player",
            "players",
            label="name",
            numbers=(
                Attribute("market_value", "market value in millions"),
                Attribute("shirt_number", "shirt number"),
            ),
            categories=(Attribute("position", "position"), Attribute("nationality", "nationality")),
            dates=(Attribute("birth_date", "birth date"),),
            optional=(Attribute("market_value", "market value"),),
        ),
        Entity(
            "matches",
            "match_id",
            "match",
            "matches",
            numbers=(Attribute("home_goals", "number of home goals"), Attribute("attendance", "attendance")),
            categories=(Attribute("season", "season"),),
            dates=(Attribute("match_date", "match date"),),
            optional=(Attribute("attendance", "attendance"),),
        ),
        Entity(
            "goals",
            "goal_id",
            "goal",
            "goals",
            numbers=(Attribute("minute", "minute"),),
            categories=(Attribute("kind", "kind"),),
        ),
    ),
    links=(
        Link("players", "team_id", "teams", "team"),
        Link("matches", "home_team_id", "teams", "home team"),
        Link("matches", "away_team_id", "teams", "away team"),
        Link("goals", "match_id", "matches"),
        Link("goals", "player_id", "players", "scorer"),
    ),
    templates=(home_wins, top_scorer, season_goals, late_goals),
)
