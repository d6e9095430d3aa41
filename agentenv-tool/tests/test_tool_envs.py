"""The five envs in process: experts, refusals, the progress rate, the Sheet and TODO final-state checks."""

import json

import pytest
from agentenv_tool.academia.env import AcademiaEnv
from agentenv_tool.movie.env import MovieEnv
from agentenv_tool.sheet.env import SheetEnv
from agentenv_tool.todo.env import TodoEnv
from agentenv_tool.weather.env import WeatherEnv

from agentenv.react import format_react
from agentenv.session import LocalSession

ENVS = [WeatherEnv, MovieEnv, AcademiaEnv, SheetEnv, TodoEnv]


def play_expert(session, idx, env_cls):
    session.reset(idx)
    for _ in range(env_cls.max_rounds):
        move = session.expert()
        answer = session.step(format_react(move.thought, move.action))  # a whole ReAct reply
        if answer.done:
            return answer
    return answer


@pytest.mark.parametrize("env_cls", ENVS, ids=lambda c: c.name)
def test_the_expert_solves_every_test_task(env_cls):
    with env_cls.shared(), LocalSession(env_cls) as session:
        failed = [idx for idx in env_cls.splits["test"] if not play_expert(session, idx, env_cls).success]
    assert failed == []


@pytest.mark.parametrize("env_cls", ENVS, ids=lambda c: c.name)
def test_splits_are_fixed_graded_and_apart(env_cls):
    sizes = {"weather": 300, "movie": 200, "academia": 100, "sheet": 100, "todo": 150}
    assert len(env_cls.splits["train"]) + len(env_cls.splits["test"]) >= sizes[env_cls.name]
    goals = {split: {(env_cls.task_of(i).record.goal, json.dumps(env_cls.task_of(i).record.init_config))
                     for i in env_cls.splits[split]} for split in ("train", "test")}
    assert not goals["train"] & goals["test"]
    levels = {env_cls.task_of(i).record.difficulty for i in env_cls.splits["test"]}
    assert levels >= {"easy", "hard"}
    kinds = {env_cls.task_of(i).kind for i in env_cls.splits["test"]}
    assert len(kinds) >= 6


def step(env, tool, **arguments):
    return env.step(f"{tool} with Action Input: {json.dumps(arguments)}")


def sheet_values(answer) -> list[list[str]]:
    return json.loads(answer.observation.split("\n")[0].removeprefix("Observation: "))


def weather_task(kind):
    return next(i for i in WeatherEnv.splits["test"] if WeatherEnv.task_of(i).kind == kind)


def test_a_partial_episode_scores_its_progress_rate():
    env = WeatherEnv()
    idx = weather_task("which_warmer")
    task = WeatherEnv.task_of(idx)
    env.reset(idx)
    plan = task.plan[:-1]
    total = 0.0
    for n, planned in enumerate(plan, 1):
        result = env.step(planned.action)
        total += result.reward
        assert result.score == pytest.approx(n / len(task.record.subgoals)) == pytest.approx(total)
        assert not result.done
    wrong = step(env, "finish", answer="Atlantis")
    assert wrong.done and wrong.reward == 0 and wrong.score == pytest.approx(len(plan) / (len(plan) + 1))
    assert not WeatherEnv.is_success(wrong.score)


def test_each_result_reaches_one_subgoal_in_a_matching_that_reaches_the_most():
    """A result near two gold places (Weather's 50 km rule) was taken by the first, and the second, which only
    it reaches, was left unreached while another result could have served the first."""
    from agentenv_tool.progress import Progress

    def place(lon: float) -> dict:
        return {"latitude": 0.0, "longitude": lon}

    progress = Progress([place(0.0), place(0.6), "answer"], places=True)  # the two gold places ~67 km apart
    assert progress.record(place(0.3)) == pytest.approx(1 / 3)  # ~33 km from each: it reaches one of them
    assert progress.record(place(-0.1)) == pytest.approx(2 / 3)  # near the first only: both are reached
    assert progress.reached() == [True, True, False]
    assert Progress([place(0.0), place(0.6), "answer"], places=True).record(place(2.0)) == 0


def test_a_correct_answer_alone_succeeds_and_calls_reach_each_subgoal_once():
    env = WeatherEnv()
    idx = weather_task("distance")
    task = WeatherEnv.task_of(idx)
    env.reset(idx)
    first = task.plan[0]
    assert env.step(first.action).score > 0
    assert env.step(first.action).reward == 0  # the same result again reaches no new subgoal
    assert step(env, "finish", answer=task.record.answer).score == 1.0


def test_malformed_actions_unknown_tools_and_schema_violations_are_observations():
    env = MovieEnv()
    env.reset(MovieEnv.splits["test"][0])
    for action, says in [
        ("search for the film please", 'Format error: "search for the film please" is not a tool call'),
        ("get_search_film with Action Input: {}", "there is no tool 'get_search_film'. The tools are: check_valid"),
        ("get_search_movie with Action Input: {}", "missing argument 'movie_name'"),
        ('get_movie_details with Action Input: {"movie_id": "1", "lang": "en"}', "unknown argument 'lang'"),
        ('get_movie_details with Action Input: {"movie_id": [1]}', "argument 'movie_id' input should be a valid"),
        ('get_movie_details with Action Input: {"movie_id": "nope"}', "there is no movie with id 'nope'"),
    ]:
        result = env.step(action)
        assert says in result.observation and result.reward == 0 and not result.done
    assert "get_movie_cast" in env.step("check_valid_actions with Action Input: {}").observation


def test_numbers_beyond_a_float_are_wrong_answers_not_crashes():
    env = WeatherEnv()
    for answer in ("1" * 4000, "-" + "9" * 4000, "1e999", "Infinity", "NaN"):
        env.reset(WeatherEnv.splits["test"][0])
        result = env.step(f'finish with Action Input: {{"answer": {answer}}}')
        assert result.done and result.score == 0, answer


def test_an_input_that_tries_code_is_never_run(tmp_path):
    marker = tmp_path / "pwned"
    env = AcademiaEnv()
    env.reset(AcademiaEnv.splits["test"][0])
    for action in [
        f"finish with Action Input: __import__('os').system('touch {marker}')",
        f"loadPaperNet with Action Input: {{'x': __import__('os').system('touch {marker}')}}",
        f'neighbourCheck with Action Input: {{"graph": "PaperNet", "node": "__import__(\'os\').system(\'touch {marker}\')"}}',
    ]:
        result = env.step(action)
        assert result.reward == 0 and not result.done
    assert not marker.exists()
    assert "Please load the PaperNet first." in env.observation()


def test_dates_out_of_range_are_refused_naming_what_is_allowed():
    env = WeatherEnv()
    idx = weather_task("past_mean")
    env.reset(idx)
    today = WeatherEnv.task_of(idx).record.init_config["current_date"]
    place = {"latitude": 48.85, "longitude": 2.35}
    for tool, dates, says in [
        ("get_historical_temp", {"start_date": today, "end_date": today}, f"earlier than today ({today})"),
        ("get_temp_forecast", {"start_date": today, "end_date": today}, f"later than today ({today})"),
        ("get_temp_forecast", {"start_date": "2099-01-01", "end_date": "2099-01-02"}, "forecasts reach 16 days"),
        ("get_historical_rain", {"start_date": "2010-01-01", "end_date": "2010-01-02"}, "starts on 2015-01-01"),
        ("get_historical_snow", {"start_date": "2016-01-01", "end_date": "2016-03-01"}, "at most 30 days"),
        ("get_historical_temp", {"start_date": "15/06/2016", "end_date": "2016-06-16"}, "written YYYY-MM-DD"),
        ("get_current_temp", {"current_date": "2016-06-16"}, f"must be today's date, {today}"),
    ]:
        result = step(env, tool, **place, **dates)
        assert says in result.observation and result.reward == 0 and not result.done


def sheet_task(kind):
    return next(i for i in SheetEnv.splits["train"] if SheetEnv.task_of(i).kind == kind)


def test_sheet_success_is_finishing_with_the_target_sheet():
    idx = sheet_task("sales_update")
    task = SheetEnv.task_of(idx)
    env = SheetEnv()
    env.reset(idx)
    for planned in task.plan[:-1]:
        result = env.step(planned.action)
    assert result.score < 1.0 and not result.done  # the sheet is right, but the episode is not finished
    assert json.loads(result.observation.removeprefix("Observation: ").split("\nGive me")[0]) == json.loads(
        task.record.answer)
    assert env.step("finish with Action Input: {}").score == 1.0

    env.reset(idx)
    for planned in task.plan[:-2]:  # all but the final sort
        env.step(planned.action)
    step(env, "sort_sheet_by_col", col_num=4, order="asc")  # the wrong order
    result = env.step("finish()")
    assert result.done and 0 < result.score < 1.0 and not SheetEnv.is_success(result.score)


def test_sheet_rows_tied_in_the_sort_key_may_stand_in_any_order():
    """A sort goal whose key has ties: an agent that sorted by another column first keeps another order of the
    tied rows, as right as the plan's (it scored 0.7, unsolved). Other rows out of place still fail."""
    def tied(i):
        task = SheetEnv.task_of(i)
        if task.kind != "sort_by":
            return False
        key = task.plan[1].arguments["col_num"]
        keys = [row[key - 1] for row in json.loads(task.record.answer)[1:]]
        return len(set(keys)) < len(keys)

    idx = next(i for i in SheetEnv.splits["test"] if tied(i))
    task = SheetEnv.task_of(idx)
    env = SheetEnv()
    env.reset(idx)
    env.step(task.plan[0].action)  # open the sheet
    step(env, "sort_sheet_by_col", col_num=1, order="des")  # the tied rows' order now differs from the plan's
    after = env.step(task.plan[1].action)  # the goal's sort
    assert sheet_values(after) != json.loads(task.record.answer)
    result = env.step("finish with Action Input: {}")
    assert result.done and result.score == 1.0

    env.reset(idx)
    env.step(task.plan[0].action)
    step(env, "update_cell", position="A2", value="renamed")  # one row changed: tied or not, no success
    env.step(task.plan[1].action)
    assert not SheetEnv.is_success(env.step("finish with Action Input: {}").score)


def test_sheet_finish_ends_the_episode_with_no_sheet_open():
    """finish needed an open sheet ('Please open a sheet'): an agent giving up could not end the episode."""
    env = SheetEnv()
    env.reset(sheet_task("sort_by"))
    result = env.step("finish with Action Input: {}")
    assert result.done and result.score < 1.0 and "Error" not in result.observation


def test_sheet_formulas_follow_their_cells_and_move_with_rows():
    env = SheetEnv()
    env.reset(sheet_task("column_totals"))
    env.step(SheetEnv.task_of(sheet_task("column_totals")).plan[0].action)  # open the sheet
    values = sheet_values(step(env, "update_cell_by_formula", operator="SUM", start_position="C2",
                               end_position="C3", result_position="J2"))
    assert float(values[1][9]) == float(values[1][2]) + float(values[2][2])
    values = sheet_values(step(env, "update_cell", position="C2", value="1000"))
    assert float(values[1][9]) == 1000 + float(values[2][2])
    values = sheet_values(step(env, "insert_rows", values_list=[["new"]], row_idx=2))
    assert values[1][0] == "new" and float(values[2][9]) == 1000 + float(values[3][2])
    assert "MINUS" in step(env, "update_cell_by_formula", operator="DIVIDE", result_position="J3",
                           position_list=["C2"]).observation
    assert "not a cell position in A1 notation" in step(env, "update_cell", position="2C", value=1).observation
    assert "at most 500 rows" in step(env, "update_cell", position="A99999", value=1).observation
    for row in range(1, 6):  # five formulas that each depend on all five: circular, shown as Sheets shows it
        step(env, "update_cell", position=f"K{row}", value="=SUM(K1:K5)")
    assert json.loads(env.observation()[13:].split("\n")[0])[0][10] == "#REF!"
    assert "at most 1000 cells" in step(env, "update_cell_by_formula", operator="SUM", start_position="A1",
                                        end_position="Z100", result_position="L1").observation
    step(env, "update_cell", position="A3", value="x" * 5000)
    assert "too long to match" in step(env, "filter_cells", query="(x+x+)+y", in_column=1).observation


def test_sheet_deleting_a_line_through_a_merged_range_shrinks_it():
    env = SheetEnv()
    env.reset(sheet_task("sort_by"))
    env.step(SheetEnv.task_of(sheet_task("sort_by")).plan[0].action)  # open the sheet
    header = env.backend.sheets.values()[0]
    step(env, "merge_cells", start_position="A1", end_position="C1")
    assert sheet_values(step(env, "delete_batch_data", dimension="col", index_list=[2]))[0] == [
        header[0], header[0], *header[3:]]  # A1:B1 now, the fourth title moved in beside it, not under it
    assert sheet_values(step(env, "delete_batch_data", dimension="col", index_list=[1]))[0] == ["", *header[3:]]
    assert not env.backend.sheets.ws().merged_cells.ranges  # one cell left: no longer merged
    step(env, "merge_cells", start_position="A1", end_position="B1")
    rows = len(env.backend.sheets.values())
    answer = step(env, "delete_batch_data", dimension="row", index_list=[1])  # the merge's only row
    assert "Error" not in answer.observation and len(sheet_values(answer)) == rows - 1
    assert not env.backend.sheets.ws().merged_cells.ranges


def test_sheet_values_with_control_characters_are_refused_before_anything_changes():
    env = SheetEnv()
    env.reset(sheet_task("sort_by"))
    env.step(SheetEnv.task_of(sheet_task("sort_by")).plan[0].action)
    before = env.backend.sheets.values()
    for tool, arguments in [("update_cell", {"position": "B14", "value": "\u0000x"}),
                            ("insert_rows", {"values_list": [["a", "\u000b"]], "row_idx": 2}),
                            ("update_note", {"position": "A2", "content": "a\u0000b"})]:
        answer = step(env, tool, **arguments)
        assert "cannot hold control characters" in answer.observation and not answer.done
    assert env.backend.sheets.values() == before


def todo_task(kind):
    return next(i for i in TodoEnv.splits["train"] if TodoEnv.task_of(i).kind == kind)


def test_todo_success_needs_the_right_answer_and_the_target_store():
    idx = todo_task("complete")
    task = TodoEnv.task_of(idx)
    env = TodoEnv()
    env.reset(idx)
    for planned in task.plan[:-1]:
        env.step(planned.action)
    listed = [t for t in env.backend.store.open_tasks()]
    extra = listed[0].id
    step(env, "delete_task", task_id=extra)  # one change too many
    result = step(env, "finish", answer="done")
    assert result.done and not TodoEnv.is_success(result.score)

    env.reset(idx)
    for planned in task.plan:
        result = env.step(planned.action)
    assert result.done and result.score == 1.0

    question = todo_task("due_date_of")
    env.reset(question)
    for planned in TodoEnv.task_of(question).plan[:-1]:
        env.step(planned.action)
    step(env, "complete_task", task_id=env.backend.store.open_tasks()[0].id)  # a question changes nothing
    assert step(env, "finish", answer=TodoEnv.task_of(question).record.subgoals[-1]).score < 1.0


@pytest.mark.parametrize(("kind", "instead"), [("complete", "delete_task"), ("delete", "complete_task")])
def test_todo_deleting_a_task_to_complete_or_the_reverse_fails(kind, instead):
    """Todoist's open-task list (AgentGym's state) loses a task either way; the state here tells them apart."""
    task = TodoEnv.task_of(todo_task(kind))
    env = TodoEnv()
    env.reset(task.record.id)
    for planned in task.plan:
        swapped = planned.tool in ("complete_task", "delete_task")
        result = step(env, instead, **planned.arguments) if swapped else env.step(planned.action)
    assert result.done and not TodoEnv.is_success(result.score)


def test_todo_counts_are_not_all_alike():
    answers = {TodoEnv.task_of(i).record.subgoals[-1] for i in TodoEnv.splits["train"]
               if TodoEnv.task_of(i).kind == "count_tasks"}
    assert len(answers) >= 3


def test_ids_written_as_numbers_and_dates_written_otherwise():
    """TMDB's search answered ids as numbers: such an id is the same id; a date is YYYY-MM-DD only."""
    env = MovieEnv()
    idx = MovieEnv.splits["test"][0]
    env.reset(idx)
    search, details = MovieEnv.task_of(idx).plan[:2]
    film_id = json.loads(env.step(search.action).observation.split("\n")[0][13:])[0]["id"]
    assert film_id.isdigit()
    as_number = step(env, "get_movie_details", movie_id=int(film_id)).observation
    assert as_number == step(env, "get_movie_details", movie_id=film_id).observation and "title" in as_number
    weather = WeatherEnv()
    weather.reset(WeatherEnv.splits["test"][0])
    for written in ("20220221", "2016-W03-1", "2022-2-21"):
        answer = step(weather, "get_historical_temp", latitude=1.0, longitude=1.0, start_date=written,
                      end_date="2022-02-21").observation
        assert "start_date must be a date written YYYY-MM-DD" in answer, answer


def test_yes_no_goals_are_not_mostly_one_answer_and_ranks_have_no_ties():
    snow = [WeatherEnv.task_of(i).record.additional_info.answer for split in ("train", "test")
            for i in WeatherEnv.splits[split] if WeatherEnv.task_of(i).kind == "snow_soon"]
    assert 0.3 <= snow.count("Yes") / len(snow) <= 0.7
    for i in SheetEnv.splits["train"]:
        task = SheetEnv.task_of(i)
        if task.kind == "rank_column":
            rank = next(s for s in task.plan if s.tool == "insert_cols").arguments["values_list"][0]
            subject = rank[0].removesuffix("_Rank")
            target = json.loads(task.record.additional_info.answer)
            scores = [row[target[0].index(subject)] for row in target[1:]]
            assert len(set(scores)) == len(scores), (i, subject)


def test_academia_names_are_read_without_the_spaces_around_them():
    """' Title ' answered 'There is no node named  Title' (Movie's and TODO's ids were stripped)."""
    env = AcademiaEnv()
    env.reset(AcademiaEnv.splits["test"][0])
    step(env, "loadPaperNet")
    title = sorted(env.backend.world.papers.nodes)[0]
    answer = step(env, "paperNodeCheck", node=f"  {title} ")
    assert "There is no node" not in answer.observation and title in answer.observation


@pytest.mark.parametrize("env_cls", ENVS, ids=lambda c: c.name)
def test_the_instructions_example_calls_one_of_the_envs_own_tools(env_cls):
    """AgentGym's example, get_user_current_date, is no tool of Academia, Movie or Sheet: an agent copying it
    lost a round to 'there is no tool'; Sheet's example, get_all_values, is refused before a sheet is open.
    Sent as written as an episode's first action, the example is a call the env carries out."""
    import re

    example = re.search(r"for example: (.*)", env_cls.instruction).group(1)
    with env_cls.shared(), LocalSession(env_cls) as session:
        session.reset(env_cls.splits["test"][0])
        observation = session.step(example).observation
    refused = ("there is no tool", "Format error", "Error", "Please")
    assert not any(word in observation for word in refused), observation
