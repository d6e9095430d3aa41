"""WebArena's evaluators on hand-built cases: string match (exact, must-include, fuzzy with and without a
judge), URL match, program-HTML checks on real pages of the bundled sites, and their product."""

from __future__ import annotations

import pytest
from agentenv_webarena.env import EvaluationPage
from agentenv_webarena.evaluators import (
    clean,
    evaluate,
    exact_match,
    must_include,
    program_html,
    reddit_get_post_url,
    string_match,
    url_match,
)
from agentenv_webarena.judge import Judge
from fastapi import FastAPI
from webarena_helpers import task_index

from agentenv.testing import running_server


def test_strings_are_stripped_unquoted_and_lower_cased():
    assert clean('  "Harbor Bay" ') == "harbor bay"
    assert clean("'x'") == "x" and clean("'x") == "'x"
    assert exact_match("Harbor Bay", ' "harbor bay"') == 1.0
    assert exact_match("Harbor Bay", "Harbor Bay, Northern Reach") == 0.0


def test_must_include_is_a_substring_test_and_a_token_test_for_one_character():
    assert must_include("23.47", "The price is $23.47.") == 1.0
    assert must_include("23.47", "The price is $23.4") == 0.0
    assert must_include("4", "It has 14 reviews", tokenize=True) == 0.0  # one character: a whole token
    assert must_include("4", "It has 4 reviews", tokenize=True) == 1.0
    assert must_include("4", "It has 14 reviews") == 1.0
    # numbers are whole tokens, as nltk's word_tokenize keeps them: 4.3 is no 4, $2,150.00 no 2, 0.5/5 no 0
    for reference, wrong in [("4", "average rating 4.3"), ("2", "3 orders totalling $2,150.00"),
                             ("0", "rated 0.5/5"), ("4", "at 4:30"), ("4", "a 4-star review")]:
        assert must_include(reference, wrong, tokenize=True) == 0.0, wrong
    assert must_include("4", "It has 4.", tokenize=True) == 1.0  # a full stop after it is its own token


def test_string_match_multiplies_its_references():
    spec = {"reference_answers": {"must_include": ["Eldermoor", "1716"]}}
    assert string_match(spec, "Eldermoor, founded 1716", "q", None)[0] == 1.0
    assert string_match(spec, "Eldermoor", "q", None)[0] == 0.0
    one = {"reference_answers": {"must_include": ["0"]}}
    assert string_match(one, "0", "q", None)[0] == 1.0
    assert string_match(one, "10", "q", None)[0] == 0.0  # a one-item list of one character is tokenized
    both = {"reference_answers": {"exact_match": "Pending", "must_include": ["pend"]}}
    assert string_match(both, "pending", "q", None)[0] == 1.0


def test_a_numeric_reference_is_compared_as_a_number_with_the_answers_numbers():
    """83.50 refused '$83.5' and 77.00 '$77' (the generated prices' references), 45,447 refused 45447, and
    55 took 155 (a substring): in the stop's answer a number is read as one (not in WebArena)."""
    def score(kind, reference, answer):
        return string_match({"reference_answers": {kind: reference}}, answer, "q", None)[0]

    for reference, right in [("83.50", "$83.5"), ("77.00", "It is $77."), ("45,447", "45447 people"),
                             ("1,204.50", "$1204.5"), ("4.5", "rated 4.5/5"), ("1716", "founded in 1716."),
                             ("13", "orders 12,13,14"), ("50", "it ranked 50th"), ("24", "open 24h"),
                             ("12", "between 12-15 items")]:  # no number read in it: WebArena's substring rule
        assert score("must_include", [reference], right) == 1.0, (reference, right)
    for reference, wrong in [("55", "155"), ("231", "2310 km"), ("1", "on 2023-05-01"),
                             ("7", "opened 2022-11-07"), ("4", "at 4:30"), ("4", "a 4-star review"), ("2", "two")]:
        assert score("must_include", [reference], wrong) == 0.0, (reference, wrong)
    assert score("exact_match", "83.50", "$83.5") == 1.0 and score("exact_match", "3", "3 items") == 0.0
    assert score("must_include", ["Harbor"], "harbor bay") == 1.0  # words: WebArena's substring rule


def test_fuzzy_match_without_a_judge_is_an_exact_match_and_na_needs_na():
    spec = {"reference_answers": {"fuzzy_match": ["2023-10-01"]}}
    assert string_match(spec, "2023-10-01", "q", None)[0] == 1.0
    assert string_match(spec, "October 1, 2023", "q", None) == (0.0, {"fuzzy_match_by": "exact (no judge configured)", "fuzzy_match": 0.0})
    na = {"reference_answers": {"fuzzy_match": "N/A"}, "string_note": "not sold"}
    assert string_match(na, "n/a", "q", None)[0] == 1.0
    assert string_match(na, "$12", "q", None)[0] == 0.0


@pytest.fixture(scope="module")
def judge():
    """A real OpenAI-compatible endpoint on a loopback port, standing in for the judge model: it calls
    an answer correct when it contains the reference's number written out, and records the prompts."""
    app, prompts = FastAPI(), []

    @app.post("/v1/chat/completions")
    async def complete(body: dict) -> dict:
        prompt = body["messages"][-1]["content"]
        prompts.append(prompt)
        if "cannot be done, for this reason" in prompt:
            verdict = "same" if "not sell" in prompt.split("The agent answered:")[1] else "different"
        elif "October 1, 2023" in prompt:
            verdict = "The dates are the same day. Verdict: correct"
        elif "Oct 2023" in prompt:
            verdict = "Only the month matches: partially correct"
        else:
            verdict = "incorrect"
        return {"choices": [{"message": {"role": "assistant", "content": verdict}}]}

    with running_server(app) as url:
        yield Judge(f"{url}/v1", model="judge-model", api_key="k"), prompts


def test_fuzzy_match_asks_the_judge_and_only_correct_counts(judge):
    model, prompts = judge
    spec = {"reference_answers": {"fuzzy_match": ["2023-10-01"]}}
    assert string_match(spec, "October 1, 2023", "When did I order?", model)[0] == 1.0
    assert "When did I order?" in prompts[-1] and "2023-10-01" in prompts[-1]
    assert string_match(spec, "Oct 2023", "When did I order?", model)[0] == 0.0  # partially correct
    assert string_match(spec, "yesterday", "When did I order?", model)[0] == 0.0


def test_an_impossible_task_is_judged_on_its_reason(judge):
    model, _ = judge
    spec = {"reference_answers": {"fuzzy_match": "N/A"}, "string_note": "The store does not sell it"}
    assert string_match(spec, "N/A", "price?", model)[0] == 1.0
    assert string_match(spec, "The shop does not sell this item", "price?", model)[0] == 1.0
    assert string_match(spec, "It costs $3", "price?", model)[0] == 0.0


def test_an_unreachable_judge_scores_zero_and_says_why():
    spec = {"reference_answers": {"fuzzy_match": ["x"]}}
    score, found = string_match(spec, "x", "q", Judge("http://127.0.0.1:9/v1", timeout=2))
    assert score == 0.0 and "failed" in found["fuzzy_match_by"]


def test_url_match_is_gold_host_and_path_within_the_final_url_with_its_query_values():
    spec = {"reference_url": "http://127.0.0.1:9999/f/books/3"}
    assert url_match(spec, "http://127.0.0.1:9999/f/books/3/do-you-annotate-your-books")[0] == 1.0
    assert url_match(spec, "http://127.0.0.1:9999/f/books/")[0] == 0.0
    assert url_match(spec, "http://127.0.0.1:9998/f/books/3")[0] == 0.0  # another port, another site
    search = {"reference_url": "http://127.0.0.1:7770/search?q=cast+iron"}
    assert url_match(search, "http://127.0.0.1:7770/search?q=cast%20iron")[0] == 1.0
    assert url_match(search, "http://127.0.0.1:7770/search?q=cast")[0] == 0.0
    either = {"reference_url": "http://h/a |OR| http://h/b/"}
    assert url_match(either, "http://h/b")[0] == 1.0 and url_match(either, "http://h/c")[0] == 0.0
    assert url_match({"reference_url": "http://h/a", "url_note": "EXACT"}, "http://h/a")[0] == 0.0


def test_the_post_url_helper():
    assert reddit_get_post_url("http://h:9999/f/books/3/slug/comment/12") == "http://h:9999/f/books/3"
    assert reddit_get_post_url("http://h:9999/forums") == "http://h:9999/forums"


def test_program_html_reads_real_pages(session, runtime):
    session.reset(task_index("In which year was"))
    page = EvaluationPage(session.env.browser)
    wiki = runtime.sites.urls["wikipedia"]
    article = f"{wiki}/wiki/Stonebridge"
    founded = "document.querySelector('#infobox').outerText"

    def check(*targets):
        return program_html({"program_html": list(targets)}, page)

    assert check({"url": article, "locator": founded, "required_contents": {"must_include": ["1304"]}})[0] == 1.0
    assert page.url == article  # the target's URL was opened
    assert check({"url": "last", "locator": "document.querySelector('#firstHeading').outerText",
                  "required_contents": {"exact_match": "stonebridge"}})[0] == 1.0
    assert check({"url": "last", "locator": "", "required_contents": {"must_include": ["Kestrel River"]}})[0] == 1.0
    assert check({"url": "last", "locator": founded, "required_contents": {"must_include": ["1305 |OR| Westvale"]}})[0] == 1.0
    assert check({"url": "last", "locator": founded, "required_contents": {"must_include": ["1305"]}})[0] == 0.0
    # every target must hold: the second fails, so the whole check does
    assert check({"url": "last", "locator": founded, "required_contents": {"must_include": ["1304"]}},
                 {"url": f"{wiki}/wiki/Eldermoor", "locator": founded, "required_contents": {"must_include": ["1304"]}})[0] == 0.0
    # a locator that throws reads as "", prep_actions run first
    assert check({"url": "last", "locator": "document.querySelector('#nope').outerText",
                  "required_contents": {"exact_match": ""}})[0] == 1.0
    prepared = {"url": "last", "prep_actions": ["document.title = 'Prepared'"], "locator": "document.title",
                "required_contents": {"exact_match": "Prepared"}}
    assert check(prepared)[0] == 1.0
    score, found = check({"url": "func:shopping_get_latest_order_url()", "locator": "", "required_contents": {}})
    assert score == 0.0 and "not supported" in found["program_html"][0]["error"]


def test_a_tasks_score_is_the_product_of_its_evaluators(session, runtime):
    session.reset(task_index("In which year was"))
    env = session.env
    wiki = runtime.sites.urls["wikipedia"]
    env.runtime.browser.run(env.browser.goto_for_evaluation(f"{wiki}/wiki/Stonebridge"))
    config = {"intent": "q", "eval": {
        "eval_types": ["string_match", "url_match", "program_html"],
        "reference_answers": {"must_include": ["1304"]},
        "reference_url": f"{wiki}/wiki/Stonebridge",
        "program_html": [{"url": "last", "locator": "document.querySelector('#firstHeading').outerText",
                          "required_contents": {"exact_match": "Stonebridge"}}],
    }}
    page = EvaluationPage(env.browser)
    result = evaluate(config, "1304", page)
    assert result.score == 1.0 and result.details["url_match"] == 1.0 and result.details["program_html"][0]["score"] == 1.0
    assert evaluate(config, "1305", page).score == 0.0
    config["eval"]["reference_url"] = f"{wiki}/wiki/Eldermoor"
    assert evaluate(config, "1304", page).score == 0.0
