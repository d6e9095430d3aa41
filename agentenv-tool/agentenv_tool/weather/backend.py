"""The weather tools of one episode: AgentGym's names, arguments and answer shapes, over the local world.

Daily answers are shaped as open-meteo's: ``{latitude, longitude, daily_units, daily: {time: [...], ...}}``
with the grid cell's coordinates.  History runs from :data:`FIRST_DAY` to the day before today, forecasts
from tomorrow to :data:`FORECAST_DAYS` days ahead, one query spans at most :data:`MAX_SPAN_DAYS` days.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Annotated, Any

from pydantic import Field

from ..base import ToolBackend
from ..matching import distance_km
from ..tools import Day, ToolError, parse_day, tool
from . import world

FIRST_DAY = date(2015, 1, 1)
FORECAST_DAYS = 16
MAX_SPAN_DAYS = 30

Latitude = Annotated[float, Field(ge=-90, le=90, description="degrees north")]
Longitude = Annotated[float, Field(ge=-180, le=180, description="degrees east")]

#: per query kind: (the daily fields, their units)
FIELDS: dict[str, dict[str, str]] = {
    "temp": {"temperature_2m_max": "°C", "temperature_2m_min": "°C", "temperature_2m_mean": "°C"},
    "rain": {"rain_sum": "mm"},
    "snow": {"snowfall_sum": "cm"},
    "air": {"european_aqi_pm2_5": "EAQI"},
}


class WeatherBackend(ToolBackend):
    """The weather service as one user sees it: their date (``today``) and city."""

    def __init__(self, today: date, location: str) -> None:
        self.today = today
        self.location = location

    # --- the user -------------------------------------------------------------------------------------
    @tool("Get the user's current date.", "the date, YYYY-MM-DD.")
    def get_user_current_date(self) -> str:
        return self.today.isoformat()

    @tool("Get the user's current city.", "the city's name.")
    def get_user_current_location(self) -> str:
        return self.location

    # --- places ---------------------------------------------------------------------------------------
    @tool("Get latitude and longitude information for a specified location name (e.g. a city).",
          '{"results": [{name, latitude, longitude, country_code}, ...]}, up to 3, most populous first.')
    def get_latitude_longitude(self, name: Annotated[str, Field(max_length=200)]) -> dict[str, Any]:
        found = world.geocode(name)
        if not found:
            raise ToolError(f"Error: no place called {name[:60]!r} was found; give a city's name, e.g. \"Paris\".")
        return {"results": [city.geocoded() for city in found]}

    @tool("Get elevation data for a specified location.", '{"elevation": [metres]}.')
    def get_elevation(self, latitude: Latitude, longitude: Longitude) -> dict[str, Any]:
        return {"elevation": [world.elevation(latitude, longitude)]}

    @tool("Calculate the distance between two sets of latitude and longitude coordinates.", "kilometres.")
    def get_distance(self, latitude1: Latitude, longitude1: Longitude, latitude2: Latitude,
                     longitude2: Longitude) -> float:
        return round(distance_km(latitude1, longitude1, latitude2, longitude2), 2)

    # --- history, forecasts, today ----------------------------------------------------------------------
    @tool("Get historical temperature data for a specified location and date range (days before today).",
          "daily temperature_2m_max / min / mean.")
    def get_historical_temp(self, latitude: Latitude, longitude: Longitude, start_date: Day, end_date: Day):
        return self._daily("temp", latitude, longitude, start_date, end_date, "past")

    @tool("Get historical rainfall data for a specified location and date range (days before today).",
          "daily rain_sum.")
    def get_historical_rain(self, latitude: Latitude, longitude: Longitude, start_date: Day, end_date: Day):
        return self._daily("rain", latitude, longitude, start_date, end_date, "past")

    @tool("Get historical snowfall data for a specified location and date range (days before today).",
          "daily snowfall_sum.")
    def get_historical_snow(self, latitude: Latitude, longitude: Longitude, start_date: Day, end_date: Day):
        return self._daily("snow", latitude, longitude, start_date, end_date, "past")

    @tool("Get temperature forecast data for a specified location and date range (days after today).",
          "daily temperature_2m_max / min / mean.")
    def get_temp_forecast(self, latitude: Latitude, longitude: Longitude, start_date: Day, end_date: Day):
        return self._daily("temp", latitude, longitude, start_date, end_date, "future")

    @tool("Get rainfall forecast data for a specified location and date range (days after today).",
          "daily rain_sum.")
    def get_rain_forecast(self, latitude: Latitude, longitude: Longitude, start_date: Day, end_date: Day):
        return self._daily("rain", latitude, longitude, start_date, end_date, "future")

    @tool("Get snowfall forecast data for a specified location and date range (days after today).",
          "daily snowfall_sum.")
    def get_snow_forecast(self, latitude: Latitude, longitude: Longitude, start_date: Day, end_date: Day):
        return self._daily("snow", latitude, longitude, start_date, end_date, "future")

    @tool("Get current temperature data for a specified location and date (today).",
          "today's temperature_2m_max / min / mean.")
    def get_current_temp(self, latitude: Latitude, longitude: Longitude, current_date: Day):
        return self._daily("temp", latitude, longitude, current_date, current_date, "today")

    @tool("Get current rainfall data for a specified location and date (today).", "today's rain_sum.")
    def get_current_rain(self, latitude: Latitude, longitude: Longitude, current_date: Day):
        return self._daily("rain", latitude, longitude, current_date, current_date, "today")

    @tool("Get current snowfall data for a specified location and date (today).", "today's snowfall_sum.")
    def get_current_snow(self, latitude: Latitude, longitude: Longitude, current_date: Day):
        return self._daily("snow", latitude, longitude, current_date, current_date, "today")

    @tool("Get historical air quality index data for a specified location and date range (days before today).",
          "daily european_aqi_pm2_5 (the PM2.5 air quality index).")
    def get_historical_air_quality_index(self, latitude: Latitude, longitude: Longitude, start_date: Day,
                                         end_date: Day):
        return self._daily("air", latitude, longitude, start_date, end_date, "past")

    @tool("Get current air quality index data for a specified location and date (today).",
          "today's european_aqi_pm2_5.")
    def get_current_air_quality_index(self, latitude: Latitude, longitude: Longitude, current_date: Day):
        return self._daily("air", latitude, longitude, current_date, current_date, "today")

    @tool("Determine the air quality level based on the air quality index (AQI).",
          "'good', 'fair', 'moderate', 'poor', 'very poor' or 'extremely poor'.")
    def get_air_quality_level(self, air_quality_index: Annotated[float, Field(ge=0)]) -> str:
        return world.air_quality_level(air_quality_index)

    # --- the shared answer --------------------------------------------------------------------------------
    def check_dates(self, start: date, end: date, when: str) -> None:
        """Refuse a range outside what ``when`` ("past", "future", "today") allows, saying what is allowed."""
        today, horizon = self.today, self.today + timedelta(days=FORECAST_DAYS)
        if when == "today":
            if start != today:
                raise ToolError(f"Error: current_date must be today's date, {today}; use the historical tools "
                                "for earlier days and the forecast tools for later ones.")
            return
        if end < start:
            raise ToolError("Error: end_date must not be earlier than start_date.")
        if (end - start).days > MAX_SPAN_DAYS:
            raise ToolError(f"Error: one query spans at most {MAX_SPAN_DAYS} days between start_date and "
                            "end_date; split it into several queries.")
        if when == "past":
            if end >= today:
                raise ToolError(f"Error: historical dates must be earlier than today ({today}); use the "
                                "forecast tools for later days and the current tools for today.")
            if start < FIRST_DAY:
                raise ToolError(f"Error: historical data starts on {FIRST_DAY}.")
        else:
            if start <= today:
                raise ToolError(f"Error: forecast dates must be later than today ({today}); use the historical "
                                "tools for earlier days and the current tools for today.")
            if end > horizon:
                raise ToolError(f"Error: forecasts reach {FORECAST_DAYS} days ahead, up to {horizon}.")

    def _daily(self, kind: str, latitude: float, longitude: float, start_date: str, end_date: str,
               when: str) -> dict[str, Any]:
        start = parse_day(start_date, "start_date" if when != "today" else "current_date")
        end = parse_day(end_date, "end_date" if when != "today" else "current_date")
        self.check_dates(start, end, when)
        days = [start + timedelta(days=i) for i in range((end - start).days + 1)]
        weather = [world.weather(latitude, longitude, d) for d in days]
        values = {
            "temp": lambda w: {"temperature_2m_max": w.temperature_max, "temperature_2m_min": w.temperature_min,
                               "temperature_2m_mean": w.temperature_mean},
            "rain": lambda w: {"rain_sum": w.rain},
            "snow": lambda w: {"snowfall_sum": w.snowfall},
            "air": lambda w: {"european_aqi_pm2_5": w.aqi},
        }[kind]
        lat, lon = world.cell(latitude, longitude)
        times = [d.isoformat() + ("T12:00" if kind == "air" else "") for d in days]
        daily: dict[str, list[Any]] = {"time": times}
        for field_name in FIELDS[kind]:
            daily[field_name] = [values(w)[field_name] for w in weather]
        return {"latitude": lat, "longitude": lon, "daily_units": {"time": "iso8601", **FIELDS[kind]},
                "daily": daily}


def clean(result: Any) -> Any:
    """A result as progress records it: daily answers without their values (which place, which days)."""
    if isinstance(result, dict) and isinstance(result.get("daily"), dict):
        return {**result, "daily": {"time": result["daily"]["time"]}}
    return result
