"""Weather goals in the styles of AgentGym's (lookups, comparisons, multi-hop questions), with expert plans.

Task ``idx`` draws a user (a "today" in 2019-2024 and a home city) and a goal kind from its own seed, writes
the expert's plan by running it on the world (:class:`~agentenv_tool.base.PlanBuilder`) and takes the gold
answer and subgoals from what the plan found.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import date, timedelta
from functools import lru_cache

from ..base import PlanBuilder, Task, task_rng
from ..records import AdditionalInfo, TaskRecord
from .backend import WeatherBackend, clean
from .world import City, task_cities, weather

FIRST_TODAY, LAST_TODAY = date(2019, 1, 1), date(2024, 12, 31)
HARDER = {"easy": "medium", "medium": "hard", "hard": "hard"}


class Goal:
    """One goal being written: the user, the plan so far, and how the goal names places."""

    def __init__(self, rng: random.Random, today: date, home: City) -> None:
        self.rng, self.today, self.home = rng, today, home
        self.plan = PlanBuilder(WeatherBackend(today, home.name), lambda _tool, result: clean(result))
        self.at_home = False

    def place(self, city: City, at_home: bool) -> str:
        """How the goal names a city: "my city" for the user's own (the agent must ask where that is)."""
        self.at_home = self.at_home or at_home
        return "my city" if at_home else city.name

    def date(self) -> date:
        self.plan.call("The question is about days relative to today, so I first need the user's current date.",
                       "get_user_current_date")
        return self.today

    def locate(self, city: City, at_home: bool) -> tuple[float, float]:
        if at_home:
            self.plan.call("The question is about the user's own city, so I ask where the user is.",
                           "get_user_current_location")
            why = f"The user is in {city.name}."
        else:
            why = f"The question is about {city.name}."
        found = self.plan.call(f"{why} The weather tools take coordinates, so I look up {city.name}'s.",
                               "get_latitude_longitude", name=city.name)["results"][0]
        return found["latitude"], found["longitude"]


def _days(day: date) -> dict[str, str]:
    return {"start_date": day.isoformat(), "end_date": day.isoformat()}


# --- the goal kinds: each returns (goal text, difficulty, answer, the finishing thought) or None ----------------


def past_mean(g: Goal, city: City, home: bool):
    text = f"What was the average temperature in {g.place(city, home)} yesterday? Please give the answer in °C as a number."
    lat, lon = g.locate(city, home)
    day = g.date() - timedelta(days=1)
    result = g.plan.call(f"Today is {g.today}, so yesterday was {day}. I fetch that day's temperatures.",
                         "get_historical_temp", latitude=lat, longitude=lon, **_days(day))
    mean = result["daily"]["temperature_2m_mean"][0]
    return text, "easy", mean, f"The mean temperature on {day} was {mean} °C."


def last_year_max(g: Goal, city: City, home: bool):
    text = (f"What was the highest temperature in {g.place(city, home)} on this day last year? "
            "Please give the answer in °C as a number.")
    lat, lon = g.locate(city, home)
    today = g.date()
    day = today.replace(year=today.year - 1, day=28 if (today.month, today.day) == (2, 29) else today.day)
    result = g.plan.call(f"Today is {today}, so this day last year was {day}. I fetch its temperatures.",
                         "get_historical_temp", latitude=lat, longitude=lon, **_days(day))
    top = result["daily"]["temperature_2m_max"][0]
    return text, "medium", top, f"The highest temperature on {day} was {top} °C."


def forecast_mean(g: Goal, city: City, home: bool):
    ahead = g.rng.randint(1, 7)
    when = {1: "tomorrow", 2: "the day after tomorrow"}.get(ahead, f"{ahead} days from now")
    text = (f"What is the forecast average temperature in {g.place(city, home)} {when}? "
            "Please give the answer in °C as a number.")
    lat, lon = g.locate(city, home)
    day = g.date() + timedelta(days=ahead)
    result = g.plan.call(f"Today is {g.today}, so {when} is {day}. I fetch the temperature forecast for it.",
                         "get_temp_forecast", latitude=lat, longitude=lon, **_days(day))
    mean = result["daily"]["temperature_2m_mean"][0]
    return text, "easy", mean, f"The forecast mean temperature for {day} is {mean} °C."


def warmer_than_yesterday(g: Goal, city: City, home: bool):
    text = (f"Is today's average temperature in {g.place(city, home)} higher than yesterday's? "
            "Please answer Yes or No.")
    lat, lon = g.locate(city, home)
    today = g.date()
    now = g.plan.call(f"Today is {today}. I fetch today's temperatures first.", "get_current_temp",
                      latitude=lat, longitude=lon, current_date=today.isoformat())["daily"]["temperature_2m_mean"][0]
    day = today - timedelta(days=1)
    before = g.plan.call(f"Today's mean is {now} °C. Now yesterday's, {day}, from the history.",
                         "get_historical_temp", latitude=lat, longitude=lon, **_days(day))
    before = before["daily"]["temperature_2m_mean"][0]
    if now == before:
        return None
    answer = "Yes" if now > before else "No"
    return text, "medium", answer, f"Today's mean is {now} °C and yesterday's was {before} °C, so: {answer}."


def which_warmer(g: Goal, city: City, home: bool):
    other = g.rng.choice([c for c in task_cities() if c.name != city.name])
    first, second = (city, other) if g.rng.random() < 0.5 else (other, city)
    text = (f"Which city will have a higher average temperature tomorrow, {first.name} or {second.name}? "
            "Please answer with the city's name.")
    day = g.date() + timedelta(days=1)
    means = {}
    for c in (first, second):
        lat, lon = g.locate(c, False)
        result = g.plan.call(f"Tomorrow is {day}. I fetch {c.name}'s temperature forecast for it.",
                             "get_temp_forecast", latitude=lat, longitude=lon, **_days(day))
        means[c.name] = result["daily"]["temperature_2m_mean"][0]
    if means[first.name] == means[second.name]:
        return None
    warmer = max(means, key=means.get)
    said = " and ".join(f"{n} {m} °C" for n, m in means.items())
    return text, "hard", warmer, f"Tomorrow's forecast means are {said}, so {warmer} is warmer."


def rain_week(g: Goal, city: City, home: bool):
    text = (f"How much rain fell in {g.place(city, home)} over the past 7 days in total? "
            "Please give the answer in mm as a number rounded to one decimal.")
    lat, lon = g.locate(city, home)
    today = g.date()
    start, end = today - timedelta(days=7), today - timedelta(days=1)
    result = g.plan.call(f"Today is {today}, so the past 7 days run from {start} to {end}. I fetch their rain.",
                         "get_historical_rain", latitude=lat, longitude=lon, start_date=start.isoformat(),
                         end_date=end.isoformat())
    total = round(sum(result["daily"]["rain_sum"]), 1)
    return text, "medium", total, f"The daily rain sums add up to {total} mm."


def _snows(city: City, today: date) -> bool:
    days = (today + timedelta(days=k) for k in (1, 2, 3))
    return any(weather(city.latitude, city.longitude, d).snowfall > 0 for d in days)


def snow_soon(g: Goal, city: City, home: bool):
    snows = g.rng.random() < 0.5  # the answer is drawn first: half the goals are Yes
    if _snows(city, g.today) != snows:  # (the user's own city too: then the goal asks about another)
        cities = g.rng.sample(task_cities(), len(task_cities()))
        city, home = next((c for c in cities if _snows(c, g.today) == snows), None), False
        if city is None:
            return None
    text = f"Will it snow in {g.place(city, home)} in the next 3 days? Please answer Yes or No."
    lat, lon = g.locate(city, home)
    today = g.date()
    start, end = today + timedelta(days=1), today + timedelta(days=3)
    result = g.plan.call(f"Today is {today}, so the next 3 days run from {start} to {end}. I fetch the snowfall "
                         "forecast.", "get_snow_forecast", latitude=lat, longitude=lon,
                         start_date=start.isoformat(), end_date=end.isoformat())
    snow = result["daily"]["snowfall_sum"]
    answer = "Yes" if any(s > 0 for s in snow) else "No"
    return text, "medium", answer, f"The forecast snowfall is {snow} cm, so: {answer}."


def air_quality(g: Goal, city: City, home: bool):
    text = (f"What is the air quality level in {g.place(city, home)} today? Please answer with the level's name, "
            "e.g. 'good'.")
    lat, lon = g.locate(city, home)
    today = g.date()
    index = g.plan.call(f"Today is {today}. I fetch today's air quality index.", "get_current_air_quality_index",
                        latitude=lat, longitude=lon, current_date=today.isoformat())["daily"]["european_aqi_pm2_5"][0]
    level = g.plan.call(f"Today's index is {index}; I turn it into a level.", "get_air_quality_level",
                        air_quality_index=index)
    return text, "medium", level, f"An index of {index} means the air quality is {level}."


def distance(g: Goal, city: City, home: bool):
    other = g.rng.choice([c for c in task_cities() if c.name != city.name])
    text = (f"How far is {g.place(city, home)} from {other.name} in a straight line? "
            "Please give the answer in km, rounded to the nearest kilometre.")
    lat1, lon1 = g.locate(city, home)
    lat2, lon2 = g.locate(other, False)
    km = g.plan.call("I have both places' coordinates; I measure the distance between them.", "get_distance",
                     latitude1=lat1, longitude1=lon1, latitude2=lat2, longitude2=lon2)
    return text, "easy", round(km), f"The distance is {km} km, about {round(km)} km."


def elevation(g: Goal, city: City, home: bool):
    text = f"What is the elevation of {g.place(city, home)}? Please give the answer in metres as a number."
    lat, lon = g.locate(city, home)
    metres = g.plan.call("I fetch the elevation at those coordinates.", "get_elevation", latitude=lat,
                         longitude=lon)["elevation"][0]
    return text, "easy", metres, f"The elevation is {metres} m."


def hottest_day(g: Goal, city: City, home: bool):
    text = (f"Which of the past 7 days had the highest maximum temperature in {g.place(city, home)}? "
            "Please answer with the date, YYYY-MM-DD.")
    lat, lon = g.locate(city, home)
    today = g.date()
    start, end = today - timedelta(days=7), today - timedelta(days=1)
    result = g.plan.call(f"Today is {today}, so the past 7 days run from {start} to {end}. I fetch their "
                         "temperatures.", "get_historical_temp", latitude=lat, longitude=lon,
                         start_date=start.isoformat(), end_date=end.isoformat())
    tops = result["daily"]["temperature_2m_max"]
    if tops.count(max(tops)) > 1:
        return None
    day = result["daily"]["time"][tops.index(max(tops))]
    return text, "hard", day, f"The highest maximum, {max(tops)} °C, was on {day}."


def spread_today(g: Goal, city: City, home: bool):
    text = (f"What is the difference between today's highest and lowest temperature in {g.place(city, home)}? "
            "Please give the answer in °C as a number rounded to one decimal.")
    lat, lon = g.locate(city, home)
    today = g.date()
    result = g.plan.call(f"Today is {today}. I fetch today's temperatures.", "get_current_temp", latitude=lat,
                         longitude=lon, current_date=today.isoformat())["daily"]
    top, bottom = result["temperature_2m_max"][0], result["temperature_2m_min"][0]
    spread = round(top - bottom, 1)
    return text, "easy", spread, f"Today's maximum is {top} °C and its minimum {bottom} °C: {spread} °C apart."


KINDS: dict[str, Callable] = {
    "past_mean": past_mean, "last_year_max": last_year_max, "forecast_mean": forecast_mean,
    "warmer_than_yesterday": warmer_than_yesterday, "which_warmer": which_warmer, "rain_week": rain_week,
    "snow_soon": snow_soon, "air_quality": air_quality, "distance": distance, "elevation": elevation,
    "hottest_day": hottest_day, "spread_today": spread_today,
}


@lru_cache(maxsize=4096)
def weather_task(idx: int) -> Task:
    """Generated Weather task ``idx``."""
    rng = task_rng("weather", idx)
    while True:  # a goal without a single answer (a tie) draws again from the same generator
        today = FIRST_TODAY + timedelta(days=rng.randrange((LAST_TODAY - FIRST_TODAY).days + 1))
        home = rng.choice(task_cities())
        kind = rng.choice(sorted(KINDS))
        at_home = rng.random() < 0.4
        city = home if at_home else rng.choice(task_cities())
        goal = Goal(rng, today, home)
        written = KINDS[kind](goal, city, at_home)
        if written is not None:
            break
    text, difficulty, answer, last_thought = written
    plan, subgoals = goal.plan.finish(f"{last_thought} I give the answer.", answer)
    record = TaskRecord(
        id=idx, goal=text, subgoals=subgoals, difficulty=HARDER[difficulty] if goal.at_home else difficulty,
        additional_info=AdditionalInfo(answer=answer, goal_type=0, tool="weather",
                                       init_config={"current_date": today.isoformat(), "current_location": home.name}),
    )
    return Task(record, plan, kind)
