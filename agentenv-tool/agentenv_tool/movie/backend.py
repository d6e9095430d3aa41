"""The film tools: AgentGym's (TMDB's) names, arguments and answer shapes over the local film database."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from .. import tools
from ..base import ToolBackend
from ..tools import ToolError, tool
from .world import Film, FilmDatabase, Person

Id = Annotated[tools.Id, Field(description="an id from a search")]
Name = Annotated[str, Field(max_length=200)]

#: the fields AgentBoard's progress leaves out of a result (they answer questions; ids and names lead to them)
UNCLEAN = ("overview", "biography", "vote_average", "genres", "revenue", "budget", "release_date")


class MovieBackend(ToolBackend):
    """The film database, read only."""

    def __init__(self, db: FilmDatabase) -> None:
        self.db = db

    def _film(self, movie_id: str) -> Film:
        film = self.db.films.get(str(movie_id).strip())
        if film is None:
            raise ToolError(f"Error: there is no movie with id {str(movie_id)[:40]!r}; find a movie's id with "
                            "get_search_movie.")
        return film

    def _person(self, person_id: str) -> Person:
        person = self.db.people.get(str(person_id).strip())
        if person is None:
            raise ToolError(f"Error: there is no person with id {str(person_id)[:40]!r}; find a person's id with "
                            "get_search_person.")
        return person

    @tool("Search for a movie by its name.", "[{id, overview, title}] for the best match, [] when none.")
    def get_search_movie(self, movie_name: Name) -> list[dict[str, Any]]:
        query = movie_name.strip().casefold()
        film = self.db.film_by_title(movie_name) or next(
            (f for f in self.db.films.values() if query and query in f.title.casefold()), None)
        return [] if film is None else [{"id": film.id, "overview": film.overview, "title": film.title}]

    @tool("Get the details of a movie.", "{title, budget, genres, revenue, vote_average, release_date}.")
    def get_movie_details(self, movie_id: Id) -> dict[str, Any]:
        film = self._film(movie_id)
        return {"title": film.title, "budget": film.budget,
                "genres": [{"id": gid, "name": name} for gid, name in film.genres], "revenue": film.revenue,
                "vote_average": film.vote_average, "release_date": film.release_date}

    @tool("Get the production companies of a movie.", "{production_companies: [{id, name, origin_country}]}.")
    def get_movie_production_companies(self, movie_id: Id) -> dict[str, Any]:
        film = self._film(movie_id)
        return {"production_companies": [{"id": cid, "name": name, "origin_country": country}
                                         for cid, name, country in film.companies]}

    @tool("Get the production countries of a movie.", "{production_countries: [{iso_3166_1, name}]}.")
    def get_movie_production_countries(self, movie_id: Id) -> dict[str, Any]:
        film = self._film(movie_id)
        return {"production_countries": [{"iso_3166_1": code, "name": name} for code, name in film.countries]}

    @tool("Get the cast of a movie (the top 10 billed).", "{cast: [{id, name, character}]}.")
    def get_movie_cast(self, movie_id: Id) -> dict[str, Any]:
        film = self._film(movie_id)
        return {"cast": [{"id": pid, "name": self.db.people[pid].name, "character": character}
                         for pid, character in film.cast[:10]]}

    @tool("Get the crew of a movie (up to 10).", "{crew: [{id, name, job}]}.")
    def get_movie_crew(self, movie_id: Id) -> dict[str, Any]:
        film = self._film(movie_id)
        return {"crew": [{"id": pid, "name": self.db.people[pid].name, "job": job} for pid, job in film.crew[:10]]}

    @tool("Get the keywords of a movie.", "{keywords: [names]}.")
    def get_movie_keywords(self, movie_id: Id) -> dict[str, Any]:
        return {"keywords": list(self._film(movie_id).keywords)}

    @tool("Search for a person by name.", "[{id, name}] for the best match, [] when none.")
    def get_search_person(self, person_name: Name) -> list[dict[str, Any]]:
        query = person_name.strip().casefold()
        person = self.db.person_by_name(person_name) or next(
            (p for p in self.db.people.values() if query and query in p.name.casefold()), None)
        return [] if person is None else [{"id": person.id, "name": person.name}]

    @tool("Get the details of a person.", "{name, biography, birthday, place_of_birth}.")
    def get_person_details(self, person_id: Id) -> dict[str, Any]:
        person = self._person(person_id)
        return {"name": person.name, "biography": person.biography, "birthday": person.birthday,
                "place_of_birth": person.place_of_birth}

    @tool("Get the movies a person acted in (up to 10).", "{cast: [{id, title, character}]}.")
    def get_person_cast(self, person_id: Id) -> dict[str, Any]:
        person = self._person(person_id)
        return {"cast": [{"id": fid, "title": self.db.films[fid].title, "character": character}
                         for fid, character in person.cast[:10]]}

    @tool("Get the movies a person worked on as crew (up to 10).", "{crew: [{id, title, job}]}.")
    def get_person_crew(self, person_id: Id) -> dict[str, Any]:
        person = self._person(person_id)
        return {"crew": [{"id": fid, "title": self.db.films[fid].title, "job": job} for fid, job in person.crew[:10]]}

    @tool("Get a person's external ids.", "{imdb_id, facebook_id, instagram_id, twitter_id}.")
    def get_person_external_ids(self, person_id: Id) -> dict[str, Any]:
        person = self._person(person_id)
        return {"imdb_id": person.imdb_id, "facebook_id": person.facebook_id,
                "instagram_id": person.instagram_id, "twitter_id": person.twitter_id}

    @tool("Get the alternative titles of a movie.", "{id, titles: [{iso_3166_1, title, type}]}.")
    def get_movie_alternative_titles(self, movie_id: Id) -> dict[str, Any]:
        film = self._film(movie_id)
        titles = [{"iso_3166_1": "US", "title": film.working_title, "type": "working title"}]
        titles += [{"iso_3166_1": country, "title": title, "type": ""}
                   for country, _lang, _native, _english, title in film.translations]
        return {"id": film.id, "titles": titles}

    @tool("Get the translations of a movie.",
          "{id, translations: [{iso_3166_1, iso_639_1, name, english_name, data: {title}}]}.")
    def get_movie_translation(self, movie_id: Id) -> dict[str, Any]:
        film = self._film(movie_id)
        return {"id": film.id, "translations": [
            {"iso_3166_1": country, "iso_639_1": lang, "name": native, "english_name": english,
             "data": {"title": title}} for country, lang, native, english, title in film.translations]}


def clean(result: Any) -> Any:
    """A result as AgentBoard's Movie progress records it: without the fields that answer questions."""
    if isinstance(result, list):
        return [clean(item) for item in result]
    if isinstance(result, dict):
        return {k: v for k, v in result.items() if k not in UNCLEAN}
    return result
