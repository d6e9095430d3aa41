"""The shared pieces: the action format, tool schemas, answer matching, the progress rate, task records."""

import json

import pytest
from agentenv_tool.actions import ActionFormatError, parse_action
from agentenv_tool.matching import same_answer, same_value
from agentenv_tool.progress import Progress
from agentenv_tool.records import ORIGINAL_BASE, RecordFileError, load_records, original_records
from agentenv_tool.tools import InvalidCall, Toolbox
from agentenv_tool.weather.backend import WeatherBackend
from agentenv_tool.weather.env import WeatherEnv


@pytest.mark.parametrize("text", [
    'get_latitude_longitude with Action Input: {"name": "Paris"}',
    'Action: get_latitude_longitude with Action Input: {"name": "Paris"}',
    'get_latitude_longitude\nAction Input: {"name": "Paris"}',
    'get_latitude_longitude with Action Input: ```json\n{"name": "Paris"}\n```',
    'get_latitude_longitude with Action Input: {"name": "Paris"}\nObservation: made up',
])
def test_the_forms_of_a_tool_call_parse_to_the_same_call(text):
    call = parse_action(text)
    assert (call.tool, call.arguments) == ("get_latitude_longitude", {"name": "Paris"})


def test_a_tool_without_arguments_may_be_named_alone():
    assert parse_action("get_user_current_date").arguments == {}
    assert parse_action("get_user_current_date with Action Input: {}").tool == "get_user_current_date"


@pytest.mark.parametrize("text, says", [
    ("I think the answer is 4", "is not a tool call"),
    ("", "is not a tool call"),
    ("finish with Action Input: {'answer': 3}", "not valid JSON"),
    ("finish with Action Input: [1, 2]", "must be a JSON object"),
    ("finish with Action Input: __import__('os').system('touch /tmp/pwned')", "not valid JSON"),
    ('finish with Action Input: {"answer": ' + "1" * 5000 + "}", "a number too long to read"),
])
def test_malformed_actions_are_refused_with_the_expected_form(text, says):
    with pytest.raises(ActionFormatError, match=says):
        parse_action(text)


def test_inputs_are_validated_against_the_tools_signature():
    box = Toolbox(WeatherBackend)
    with pytest.raises(InvalidCall, match="there is no tool 'get_wheather'.*get_historical_temp"):
        box.validate("get_wheather", {})
    with pytest.raises(InvalidCall, match="missing argument 'end_date'.*get_historical_temp\\(latitude: number"):
        box.validate("get_historical_temp", {"latitude": 1, "longitude": 2, "start_date": "2020-01-01"})
    with pytest.raises(InvalidCall, match="argument 'latitude' .*less than or equal to 90"):
        box.validate("get_elevation", {"latitude": 91, "longitude": 0})
    with pytest.raises(InvalidCall, match="argument 'longitude' .*valid number.*'east'"):
        box.validate("get_elevation", {"latitude": 1, "longitude": "east"})
    with pytest.raises(InvalidCall, match="unknown argument 'city'"):
        box.validate("get_latitude_longitude", {"name": "Paris", "city": "Paris"})
    with pytest.raises(InvalidCall, match="argument 'answer'"):
        box.validate("finish", {"answer": {"a": 1}})


def test_answers_match_as_agentboard_asks():
    assert same_answer(18.46, 18.5) and same_answer("18.5", 18.5) and not same_answer(18.6, 18.5)
    assert same_answer(444.3, 444) and not same_answer(445, 444)
    assert not same_answer(18.45, 18.5) and not same_answer(18.55, 18.5)  # what rounds to the gold, ties not
    assert not same_answer(2.5, 3) and not same_answer("3.5", 3)
    assert same_answer(1 / 3, 1 / 3) and same_answer(str(0.1 + 0.2), 0.1 + 0.2)  # a gold of many decimals
    assert same_answer(" 'yes'. ", "Yes") and not same_answer("No", "Yes")
    assert same_answer(["b", "a"], ["a", "b"]) and not same_answer(["a"], ["a", "b"])
    assert same_answer("2023-05-30", "2023-05-30") and not same_answer("2023-05-31", "2023-05-30")


def test_places_within_50_km_are_the_same_subgoal():
    paris = {"latitude": 48.85, "longitude": 2.35, "daily": {"time": ["2023-01-01"]}}
    near = {"latitude": 48.75, "longitude": 2.5, "daily": {"time": ["2023-01-01"]}}
    lyon = {"latitude": 45.75, "longitude": 4.85, "daily": {"time": ["2023-01-01"]}}
    assert same_value(paris, near, places=True) and not same_value(paris, near)
    assert not same_value(paris, lyon, places=True)
    assert not same_value(paris, {**near, "daily": {"time": ["2023-01-02"]}}, places=True)


def test_progress_is_the_share_of_subgoals_reached_each_at_most_once_and_never_falls():
    progress = Progress(["2023-06-15", {"x": 1}, {"x": 1}, 42])
    assert progress.record("2023-06-15") == 0.25
    assert progress.record({"x": 1}) == 0.5
    assert progress.record({"x": 1}) == 0.75  # a second result reaches the second equal subgoal
    assert progress.record({"x": 1}) == 0.75
    assert progress.reached() == [True, True, True, False]
    assert progress.finish(False) == 0.75  # a wrong answer keeps what was reached
    assert Progress(["a", "b", 42]).finish(True) == 1.0  # a right answer reaches every subgoal


AGENTGYM_LINES = [
    {"id": 0, "goal": "What was the average temperature in Celsius yesterday?", "subgoals": [18.5],
     "additional_info": {"answer": 18.5, "init_config": {"current_date": "2023-06-15", "current_location": "New York"},
                         "goal_type": 0, "tool": "weather"}, "difficulty": "hard"},
    {"task": "tool-query", "id": 1, "goal": "Who has the most collaborations with Lazhar Labiod?",
     "subgoals": ["Mohamed Nadif"], "additional_info": {"answer": "Mohamed Nadif", "init_config": None,
                                                         "goal_type": 0, "tool": "academia"}, "difficulty": "easy"},
]


def test_agentgym_task_files_load_and_play(tmp_path, monkeypatch):
    path = tmp_path / "weather.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in AGENTGYM_LINES) + "\n\n")
    records = load_records(path)
    assert [r.goal for r in records] == [line["goal"] for line in AGENTGYM_LINES]
    assert records[0].init_config["current_location"] == "New York" and records[1].answer == "Mohamed Nadif"
    assert records[1].model_extra["task"] == "tool-query"

    monkeypatch.setenv("AGENTENV_WEATHER_TASKS", str(path))
    original_records.cache_clear()
    try:
        assert WeatherEnv.splits_for("weather", 400, 100)["agentgym"] == range(ORIGINAL_BASE, ORIGINAL_BASE + 2)
        env = WeatherEnv()
        first = env.reset(ORIGINAL_BASE)
        assert first == ("Now new trial starts.\nYou should perform actions to accomplish the goal: What was the "
                         "average temperature in Celsius yesterday?\nGive me one action.")
        assert env.step("get_user_current_date with Action Input: {}").observation.startswith(
            "Observation: 2023-06-15")
        assert env.step("get_user_current_location with Action Input: {}").observation.startswith(
            "Observation: New York")
        assert env.step('finish with Action Input: {"answer": 18.5}').score == 1.0
    finally:
        monkeypatch.delenv("AGENTENV_WEATHER_TASKS")
        original_records.cache_clear()


def test_a_bad_task_file_names_its_line(tmp_path):
    path = tmp_path / "movie.jsonl"
    path.write_text(json.dumps(AGENTGYM_LINES[0]) + "\n" + json.dumps({"id": "x", "goal": 3}) + "\n")
    with pytest.raises(RecordFileError, match="movie.jsonl, line 2: id"):
        load_records(path)
