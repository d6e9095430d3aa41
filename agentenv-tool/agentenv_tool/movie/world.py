"""The film database: 400 films and the people who made them, generated from one seed.

Names are drawn from the word lists below (titles from adjectives and nouns, people from first and last
names); genres use TMDB's genre ids.  Every film has a release date, budget, revenue, rating, genres,
production companies and countries, keywords, a cast of actors with characters, a crew with jobs, an
alternative (working) title and translations of its title; every person a birthday, birthplace, biography and
external ids.  Ids are strings, as TMDB's are.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import cache

SEED = 20240601
N_FILMS = 400

ADJECTIVES = {  # English: (German, French, Spanish)
    "Silent": ("Stille", "Silencieux", "Silencioso"), "Broken": ("Zerbrochene", "Brisé", "Roto"),
    "Golden": ("Goldene", "Doré", "Dorado"), "Last": ("Letzte", "Dernier", "Último"),
    "Hidden": ("Verborgene", "Caché", "Oculto"), "Crimson": ("Purpurne", "Pourpre", "Carmesí"),
    "Distant": ("Ferne", "Lointain", "Lejano"), "Frozen": ("Gefrorene", "Gelé", "Helado"),
    "Burning": ("Brennende", "Brûlant", "Ardiente"), "Lost": ("Verlorene", "Perdu", "Perdido"),
    "Secret": ("Geheime", "Secret", "Secreto"), "Wild": ("Wilde", "Sauvage", "Salvaje"),
    "Midnight": ("Mitternächtliche", "Minuit", "Medianoche"), "Electric": ("Elektrische", "Électrique", "Eléctrico"),
    "Iron": ("Eiserne", "De fer", "De hierro"), "Paper": ("Papierne", "De papier", "De papel"),
    "Endless": ("Endlose", "Sans fin", "Interminable"), "Quiet": ("Leise", "Tranquille", "Tranquilo"),
}
NOUNS = {
    "Harbor": ("Hafen", "Port", "Puerto"), "River": ("Fluss", "Rivière", "Río"), "Kingdom": ("Königreich", "Royaume", "Reino"),
    "Garden": ("Garten", "Jardin", "Jardín"), "Engine": ("Maschine", "Moteur", "Motor"), "Letter": ("Brief", "Lettre", "Carta"),
    "Mountain": ("Berg", "Montagne", "Montaña"), "Mirror": ("Spiegel", "Miroir", "Espejo"), "Summer": ("Sommer", "Été", "Verano"),
    "Empire": ("Imperium", "Empire", "Imperio"), "Station": ("Bahnhof", "Gare", "Estación"), "Forest": ("Wald", "Forêt", "Bosque"),
    "Promise": ("Versprechen", "Promesse", "Promesa"), "Island": ("Insel", "Île", "Isla"), "Storm": ("Sturm", "Tempête", "Tormenta"),
    "Voyage": ("Reise", "Voyage", "Viaje"), "Machine": ("Apparat", "Machine", "Máquina"), "City": ("Stadt", "Ville", "Ciudad"),
    "Signal": ("Signal", "Signal", "Señal"), "Horizon": ("Horizont", "Horizon", "Horizonte"), "Orchard": ("Obstgarten", "Verger", "Huerto"),
    "Lantern": ("Laterne", "Lanterne", "Linterna"), "Winter": ("Winter", "Hiver", "Invierno"), "Frontier": ("Grenze", "Frontière", "Frontera"),
}
LANGUAGES = (("DE", "de", "Deutsch", "German"), ("FR", "fr", "Français", "French"), ("ES", "es", "Español", "Spanish"))
FIRST_NAMES = (
    "Ada Alan Alice Amir Anna Arjun Beatriz Bruno Carla Chen Clara Daniel Diego Elena Emil Eva Farid Felix Grace "
    "Hana Hugo Ines Ivan Jonas Julia Kai Kenji Lara Leo Lina Lucas Maya Mateo Mia Nadia Noah Nora Omar Oscar "
    "Paula Pedro Priya Rafael Rosa Ruth Samuel Sara Sofia Tariq Theo Uma Victor Vera Wei Yara Yusuf Zoe"
).split()
LAST_NAMES = (
    "Abbott Alvarez Baker Bennett Castillo Chandra Costa Dalton Duarte Eriksen Fischer Fontaine Garcia Hale "
    "Hartmann Ibarra Jensen Kaur Kowalski Laurent Lindqvist Marsh Moreau Nakamura Novak Okafor Ortega Park "
    "Petrov Quinn Ramos Reyes Rossi Sato Schmidt Silva Sorensen Tanaka Thornton Ueda Varga Vasquez Walsh "
    "Weber Whitfield Xu Yamada Young Zielinski"
).split()
PLACES = (
    "Tucson, Arizona, USA", "Scottsdale, Arizona, USA", "Concord, California, USA", "Chicago, Illinois, USA",
    "Austin, Texas, USA", "Portland, Oregon, USA", "Boston, Massachusetts, USA", "Toronto, Ontario, Canada",
    "Montréal, Québec, Canada", "London, England, UK", "Manchester, England, UK", "Glasgow, Scotland, UK",
    "Dublin, Ireland", "Paris, France", "Lyon, France", "Berlin, Germany", "Hamburg, Germany", "Madrid, Spain",
    "Seville, Spain", "Rome, Italy", "Milan, Italy", "Stockholm, Sweden", "Copenhagen, Denmark", "Oslo, Norway",
    "Tokyo, Japan", "Osaka, Japan", "Seoul, South Korea", "Mumbai, India", "Mexico City, Mexico",
    "Buenos Aires, Argentina", "São Paulo, Brazil", "Sydney, Australia", "Melbourne, Australia",
    "Auckland, New Zealand", "Lagos, Nigeria", "Cape Town, South Africa",
)
GENRES = ((28, "Action"), (12, "Adventure"), (16, "Animation"), (35, "Comedy"), (80, "Crime"), (18, "Drama"),
          (10751, "Family"), (14, "Fantasy"), (36, "History"), (27, "Horror"), (10402, "Music"), (9648, "Mystery"),
          (10749, "Romance"), (878, "Science Fiction"), (53, "Thriller"), (10752, "War"), (37, "Western"))
COUNTRIES = (("US", "United States of America"), ("GB", "United Kingdom"), ("FR", "France"), ("DE", "Germany"),
             ("JP", "Japan"), ("KR", "South Korea"), ("ES", "Spain"), ("IT", "Italy"), ("CA", "Canada"),
             ("IN", "India"))
NATIONALITIES = {"US": "American", "GB": "British", "FR": "French", "DE": "German", "JP": "Japanese",
                 "KR": "South Korean", "ES": "Spanish", "IT": "Italian", "CA": "Canadian", "IN": "Indian"}
COMPANY_WORDS = ("Northlight Pictures", "Blue Harbor Films", "Granite Studios", "Lantern House", "Red Orchard Media",
                 "Silverline Entertainment", "Tidewater Films", "Foxglove Pictures", "Ironbridge Productions",
                 "Paper Moon Studios", "Sunward Films", "Kestrel Entertainment", "Maple & Vine", "Open Road Works",
                 "Quarry Lane Pictures", "Saltmarsh Films", "Hollow Oak Studios", "Bright Meridian",
                 "Windmill Pictures", "Cobalt Street Films")
KEYWORDS = ("based on novel", "friendship", "revenge", "time travel", "heist", "small town", "coming of age",
            "family secret", "road trip", "artificial intelligence", "survival", "war veteran", "love triangle",
            "detective", "island", "space travel", "music band", "betrayal", "dystopia", "true story",
            "sports", "ghost", "journalism", "courtroom", "escape", "dragon", "inheritance", "prison")
CREW_JOBS = ("Director", "Producer", "Screenplay", "Original Music Composer", "Director of Photography", "Editor")


@dataclass
class Person:
    id: str
    name: str
    birthday: str
    place_of_birth: str
    imdb_id: str
    facebook_id: str | None
    instagram_id: str | None
    twitter_id: str | None
    biography: str = ""
    cast: list[tuple[str, str]] = field(default_factory=list)  # (film id, character)
    crew: list[tuple[str, str]] = field(default_factory=list)  # (film id, job)


@dataclass
class Film:
    id: str
    title: str
    release_date: str
    budget: int
    revenue: int
    vote_average: float
    genres: list[tuple[int, str]]
    overview: str
    companies: list[tuple[int, str, str]]  # (id, name, origin country)
    countries: list[tuple[str, str]]
    keywords: list[str]
    cast: list[tuple[str, str]]  # (person id, character), billing order
    crew: list[tuple[str, str]]  # (person id, job)
    working_title: str
    translations: list[tuple[str, str, str, str, str]]  # (country, language, name, english name, title)


@dataclass
class FilmDatabase:
    films: dict[str, Film]
    people: dict[str, Person]

    def film_by_title(self, title: str) -> Film | None:
        return next((f for f in self.films.values() if f.title.casefold() == title.strip().casefold()), None)

    def person_by_name(self, name: str) -> Person | None:
        return next((p for p in self.people.values() if p.name.casefold() == name.strip().casefold()), None)


def _a(word: str) -> str:
    """``word`` lower-cased after its indefinite article."""
    return f"{'an' if word[0] in 'AEIOU' else 'a'} {word.lower()}"


def _translated_title(adjective: str, noun: str, language: int) -> str:
    return f"{ADJECTIVES[adjective][language]} {NOUNS[noun][language]}"


@cache
def film_database() -> FilmDatabase:
    """The database (the same on every machine)."""
    rng = random.Random(SEED)
    every_name = [f"{f} {last}" for f in FIRST_NAMES for last in LAST_NAMES]
    names = list(every_name)
    rng.shuffle(names)
    people: dict[str, Person] = {}
    for i, name in enumerate(names[:900]):
        handle = name.lower().replace(" ", "")
        birthday = date(1940, 1, 1) + timedelta(days=rng.randrange(60 * 365))
        people[str(50_000 + 7 * i)] = Person(
            id=str(50_000 + 7 * i), name=name, birthday=birthday.isoformat(), place_of_birth=rng.choice(PLACES),
            imdb_id=f"nm{rng.randrange(10**7):07d}", facebook_id=handle if rng.random() < 0.5 else None,
            instagram_id=f"{handle}{rng.randrange(100)}" if rng.random() < 0.6 else None,
            twitter_id=f"{handle}_official" if rng.random() < 0.4 else None,
        )
    ids = list(people)
    actors, makers = ids[:700], ids[700:]
    titles = [(a, n) for a in ADJECTIVES for n in NOUNS]
    rng.shuffle(titles)
    films: dict[str, Film] = {}
    for i, (adjective, noun) in enumerate(titles[:N_FILMS]):
        film_id = str(1_000 + 13 * i)
        title = f"The {adjective} {noun}" if rng.random() < 0.6 else f"{adjective} {noun}"
        released = date(1980, 1, 1) + timedelta(days=rng.randrange(44 * 365))
        budget = rng.randrange(2, 250) * 1_000_000
        revenue = int(budget * rng.uniform(0.2, 6.0)) // 1000 * 1000
        genres = sorted(rng.sample(GENRES, rng.randint(1, 3)))
        countries = sorted(rng.sample(COUNTRIES, 1 if rng.random() < 0.7 else 2))
        companies = sorted({(300 + 11 * j, COMPANY_WORDS[j], rng.choice(COUNTRIES)[0])
                            for j in rng.sample(range(len(COMPANY_WORDS)), rng.randint(1, 3))})
        cast_ids = rng.sample(actors, rng.randint(6, 10))
        characters = rng.sample(every_name, len(cast_ids))
        crew_people = rng.sample(makers, len(CREW_JOBS))
        film = Film(
            id=film_id, title=title, release_date=released.isoformat(), budget=budget, revenue=revenue,
            vote_average=round(rng.uniform(4.0, 8.9), 1), genres=genres,
            overview=f"{_a(genres[0][1]).capitalize()} story set around {_a(noun)}, where {characters[0]} must face "
                     f"what the {adjective.lower()} past left behind.",
            companies=companies, countries=countries, keywords=sorted(rng.sample(KEYWORDS, rng.randint(2, 5))),
            cast=list(zip(cast_ids, characters, strict=True)), crew=list(zip(crew_people, CREW_JOBS, strict=True)),
            working_title=f"{noun} Project" if rng.random() < 0.5 else f"Untitled {noun} Film",
            translations=[(c, lang, native, english, _translated_title(adjective, noun, k))
                          for k, (c, lang, native, english) in enumerate(LANGUAGES)],
        )
        films[film_id] = film
        for person, character in film.cast:
            people[person].cast.append((film_id, character))
        for person, job in film.crew:
            people[person].crew.append((film_id, job))
    for person in people.values():
        known = [films[f].title for f, _ in person.cast] + [films[f].title for f, _ in person.crew]
        country = person.place_of_birth.rsplit(", ", 1)[-1]
        role = "actor" if person.cast else "filmmaker"
        person.biography = (f"{person.name} is a {role} born in {person.place_of_birth.split(',')[0]}, {country}"
                            + (f", known for {known[0]}." if known else "."))
    return FilmDatabase(films, people)
