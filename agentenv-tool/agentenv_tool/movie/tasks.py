"""Movie goals in the styles of AgentGym's (lookups, comparisons, multi-hop questions), with expert plans."""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import lru_cache

from ..base import PlanBuilder, Task, task_rng
from ..records import AdditionalInfo, TaskRecord
from .backend import MovieBackend, clean
from .world import NATIONALITIES, Film, film_database


class Goal:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.db = film_database()
        self.plan = PlanBuilder(MovieBackend(self.db), lambda _tool, result: clean(result))

    def film(self) -> Film:
        return self.db.films[self.rng.choice(sorted(self.db.films))]

    def search(self, film: Film) -> str:
        found = self.plan.call(f"I need the id of {film.title}, so I search for the movie.", "get_search_movie",
                               movie_name=film.title)
        return found[0]["id"]

    def details(self, film: Film) -> dict:
        movie_id = self.search(film)
        return self.plan.call(f"{film.title} has id {movie_id}. Its details hold what I need.",
                              "get_movie_details", movie_id=movie_id)


def director_of(g: Goal):
    film = g.film()
    movie_id = g.search(film)
    crew = g.plan.call(f"{film.title} has id {movie_id}; the director is in its crew.", "get_movie_crew",
                       movie_id=movie_id)["crew"]
    director = next(c["name"] for c in crew if c["job"] == "Director")
    return (f"Who directed {film.title}? Please answer with the director's name.", "easy", director,
            f"The crew lists {director} as Director.")


def director_birthplace(g: Goal):
    film = g.film()
    movie_id = g.search(film)
    crew = g.plan.call(f"{film.title} has id {movie_id}; I look for its director in the crew.", "get_movie_crew",
                       movie_id=movie_id)["crew"]
    director = next(c for c in crew if c["job"] == "Director")
    place = g.plan.call(f"The director is {director['name']} (id {director['id']}); the birthplace is in their "
                        "details.", "get_person_details", person_id=director["id"])["place_of_birth"]
    return (f"Where was the director of {film.title} born? Please answer with the birthplace as a string.",
            "hard", place, f"{director['name']} was born in {place}.")


def who_played(g: Goal):
    film = g.film()
    actor_id, character = g.rng.choice(film.cast[:10])
    movie_id = g.search(film)
    g.plan.call(f"{film.title} has id {movie_id}; its cast says who played whom.", "get_movie_cast",
                movie_id=movie_id)
    actor = g.db.people[actor_id].name
    return (f"Who played the character {character} in {film.title}? Please answer with the actor's name.",
            "medium", actor, f"The cast lists {actor} as {character}.")


def character_of(g: Goal):
    film = g.film()
    actor_id, character = g.rng.choice(film.cast[:10])
    actor = g.db.people[actor_id].name
    found = g.plan.call(f"I need {actor}'s id, so I search for the person.", "get_search_person", person_name=actor)
    credits = g.plan.call(f"{actor} has id {found[0]['id']}; their acting credits name their characters.",
                          "get_person_cast", person_id=found[0]["id"])["cast"]
    if not any(c["title"] == film.title for c in credits):
        return None  # beyond the top 10 credits
    return (f"What character did {actor} play in {film.title}? Please answer with the character's name.",
            "medium", character, f"In {film.title}, {actor} played {character}.")


def film_fact(g: Goal):
    film = g.film()
    fact, question, how = g.rng.choice((
        ("budget", "What is the budget of the movie {t}? Please answer with a number.", "easy"),
        ("revenue", "How much revenue did the movie {t} make? Please answer with a number.", "easy"),
        ("release_date", "What is the release date of the movie {t}? Please answer in the format YYYY-MM-DD.", "easy"),
        ("vote_average", "What is the average vote score of the movie {t}? Please answer with a number.", "easy"),
    ))
    value = g.details(film)[fact]
    return question.format(t=film.title), how, value, f"The details give {fact} = {value}."


def made_profit(g: Goal):
    profit = g.rng.random() < 0.5  # half the goals ask about a film that made a profit
    film = next(f for f in iter(g.film, None) if (f.revenue > f.budget) == profit)
    details = g.details(film)
    answer = "Yes" if details["revenue"] > details["budget"] else "No"
    return (f"Did the movie {film.title} make a profit? Please answer with Yes or No.", "medium", answer,
            f"Its revenue is {details['revenue']} against a budget of {details['budget']}, so: {answer}.")


def compare(g: Goal):
    first, second = g.film(), g.film()
    fact, question, pick = g.rng.choice((
        ("vote_average", "{a} versus {b}: which has a higher rating? Please answer with the film's name.", max),
        ("revenue", "Which of {a} and {b} had higher earnings? Please answer with the film's name.", max),
        ("release_date", "Which movie was released earlier, {a} or {b}? Please answer with the film's name.", min),
    ))
    values = {film.title: g.details(film)[fact] for film in (first, second)}
    if first.title == second.title or len(set(values.values())) == 1:
        return None
    answer = pick(values, key=values.get)
    said = " and ".join(f"{t}: {v}" for t, v in values.items())
    return question.format(a=first.title, b=second.title), "hard", answer, f"Comparing {fact}, {said}: {answer}."


def share_genre(g: Goal):
    first, common = g.film(), g.rng.random() < 0.5  # half the pairs share a genre
    second = next(f for f in iter(g.film, None) if bool(set(f.genres) & set(first.genres)) == common and f != first)
    if first.title == second.title:
        return None
    genres = [{x["name"] for x in g.details(film)["genres"]} for film in (first, second)]
    common = genres[0] & genres[1]
    answer = "Yes" if common else "No"
    return (f"Do {first.title} and {second.title} share a common genre? Please answer with Yes or No.", "hard",
            answer, f"Their genres are {sorted(genres[0])} and {sorted(genres[1])}, so: {answer}.")


def companies(g: Goal):
    film = g.film()
    movie_id = g.search(film)
    names = sorted(c["name"] for c in g.plan.call(
        f"{film.title} has id {movie_id}; I fetch its production companies.", "get_movie_production_companies",
        movie_id=movie_id)["production_companies"])
    return (f"What are the production companies of the movie {film.title}? Please provide the names as an array.",
            "medium", names, f"The production companies are {names}.")


def from_country(g: Goal):
    film = g.film()
    own = [c for c, _ in film.countries]
    code = g.rng.choice(own if g.rng.random() < 0.5 else sorted(set(NATIONALITIES) - set(own)))
    movie_id = g.search(film)
    countries = g.plan.call(f"{film.title} has id {movie_id}; I fetch its production countries.",
                            "get_movie_production_countries", movie_id=movie_id)["production_countries"]
    answer = "Yes" if any(c["iso_3166_1"] == code for c in countries) else "No"
    nationality = NATIONALITIES[code]
    article = "an" if nationality[0] in "AEIOU" else "a"
    return (f"Is the movie {film.title} {article} {nationality} film? Please answer with Yes or No.", "medium",
            answer, f"Its production countries are {[c['name'] for c in countries]}, so: {answer}.")


def actor_imdb(g: Goal):
    film = g.film()
    actor_id, character = g.rng.choice(film.cast[:10])
    movie_id = g.search(film)
    cast = g.plan.call(f"{film.title} has id {movie_id}; its cast tells who played {character}.",
                       "get_movie_cast", movie_id=movie_id)["cast"]
    actor = next(c for c in cast if c["character"] == character)
    imdb = g.plan.call(f"{actor['name']} (id {actor['id']}) played {character}; their IMDB id is among their "
                       "external ids.", "get_person_external_ids", person_id=actor["id"])["imdb_id"]
    return (f"What is the IMDB ID of the actor who plays {character} in {film.title}? Please provide the IMDB ID "
            "as a string.", "hard", imdb, f"{actor['name']}'s IMDB id is {imdb}.")


def translated_title(g: Goal):
    film = g.film()
    language = g.rng.choice(["German", "French", "Spanish"])
    movie_id = g.search(film)
    translations = g.plan.call(f"{film.title} has id {movie_id}; its translations give the {language} title.",
                               "get_movie_translation", movie_id=movie_id)["translations"]
    title = next(t["data"]["title"] for t in translations if t["english_name"] == language)
    return (f"What is the {language} title of the movie {film.title}? Please provide the title as a string.",
            "medium", title, f"The {language} translation's title is {title}.")


def working_title(g: Goal):
    film = g.film()
    movie_id = g.search(film)
    titles = g.plan.call(f"{film.title} has id {movie_id}; its alternative titles include the working title.",
                         "get_movie_alternative_titles", movie_id=movie_id)["titles"]
    title = next(t["title"] for t in titles if t["type"] == "working title")
    return (f"What was the working title of the movie {film.title}? Please provide the title as a string.",
            "medium", title, f"The working title was {title}.")


def person_birthday(g: Goal):
    person = g.db.people[g.rng.choice(sorted(g.db.people))]
    found = g.plan.call(f"I need {person.name}'s id, so I search for the person.", "get_search_person",
                        person_name=person.name)
    birthday = g.plan.call(f"{person.name} has id {found[0]['id']}; the birthday is in their details.",
                           "get_person_details", person_id=found[0]["id"])["birthday"]
    return (f"When was {person.name} born? Please answer with the date, YYYY-MM-DD.", "easy", birthday,
            f"{person.name} was born on {birthday}.")


KINDS: dict[str, Callable] = {
    "director_of": director_of, "director_birthplace": director_birthplace, "who_played": who_played,
    "character_of": character_of, "film_fact": film_fact, "made_profit": made_profit, "compare": compare,
    "share_genre": share_genre, "companies": companies, "from_country": from_country, "actor_imdb": actor_imdb,
    "translated_title": translated_title, "working_title": working_title, "person_birthday": person_birthday,
}


@lru_cache(maxsize=4096)
def movie_task(idx: int) -> Task:
    """Generated Movie task ``idx``."""
    rng = task_rng("movie", idx)
    while True:
        kind = rng.choice(sorted(KINDS))
        goal = Goal(rng)
        written = KINDS[kind](goal)
        if written is not None:
            break
    text, difficulty, answer, last_thought = written
    plan, subgoals = goal.plan.finish(f"{last_thought} I give the answer.", answer)
    record = TaskRecord(id=idx, goal=text, subgoals=subgoals, difficulty=difficulty,
                        additional_info=AdditionalInfo(answer=answer, goal_type=0, tool="movie"))
    return Task(record, plan, kind)
