"""WebArena's evaluators: string match on the answer, URL match on the final page, program-HTML checks of
page contents.  A task's score is the product of its evaluators' scores.

The rules (WebArena's):

- strings are cleaned before comparing: stripped, one pair of surrounding quotes removed, lower-cased;
- ``exact_match``: the cleaned answer equals the cleaned reference; ``must_include``: each reference is a
  substring of the answer (a one-item list of a one-character reference must be a whole token); here, not in
  WebArena, a reference that is a number is compared as one with the answer's numbers (``83.50`` takes
  ``$83.5``, ``45,447`` takes ``45447``; ``55`` no longer takes ``155``), in the stop's answer only;
  ``fuzzy_match``: a judge model agrees (see :mod:`.judge`); the reference "N/A" (an impossible task)
  needs the answer "N/A", or a judge that finds the same reason as ``string_note``;
- URL match (``url_note`` "GOLD in PRED", the default): some reference's host and path (alternatives
  joined by " |OR| ") lie within the final URL's, and every query parameter of the references has one of
  its values in the final URL's query;
- program HTML: for each target, open its URL (``"last"``: stay on the final page), take the page's HTML
  (empty locator) or the value of the locator's JS expression, and check ``exact_match`` or
  ``must_include`` (alternatives joined by " |OR| ").  Targets' ``func:`` helpers need WebArena's site APIs:
  only ``reddit_get_post_url`` is supported; any other scores 0 with the reason in the details.
"""

from __future__ import annotations

import html
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

from .judge import Judge, JudgeError

OR = " |OR| "
TOKEN = re.compile(r"\d+(?:[.,/:]\d+)+|\w+(?:-\w+)*|[^\w\s]")
HELPER = re.compile(r"^func:(\w+)\((.*)\)$", re.DOTALL)
#: a number as answers write it: a currency sign, thousands commas, decimals, a unit or ordinal glued after
#: it (24h, 50th); not a piece of a word, a date, a time, a range or '4-star'
NUMBER = re.compile(r"(?<![\w.:-])[$€£]?(-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)(?![\d_]|[.:-]\w|,\d{3}\b)")


class Page(Protocol):
    """What the program-HTML evaluator reads: the session's current tab."""

    @property
    def url(self) -> str: ...

    def goto(self, url: str) -> None: ...

    def evaluate(self, expression: str) -> Any: ...

    def content(self) -> str: ...


@dataclass
class Evaluation:
    """A task's score and what each evaluator found."""

    score: float
    details: dict[str, Any] = field(default_factory=dict)


# --- strings ---------------------------------------------------------------------------------------------


def clean(text: Any) -> str:
    text = str(text).strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    return text.lower()


def exact_match(reference: Any, answer: Any) -> float:
    return float(clean(reference) == clean(answer))


def must_include(reference: Any, answer: Any, tokenize: bool = False) -> float:
    ref, pred = clean(reference), clean(answer)
    if tokenize and len(ref) == 1:
        return float(ref in TOKEN.findall(pred))
    return float(ref in pred)


def as_number(text: Any) -> float | None:
    """The number a cleaned text is, whole (``"$1,204.50"`` is 1204.5); None for anything else."""
    found = NUMBER.fullmatch(clean(text))
    return _value(found.group(1)) if found else None


def numbers_in(text: Any) -> list[float]:
    return [_value(n) for n in NUMBER.findall(clean(text))]


def _value(digits: str) -> float:
    return float(digits.replace(",", ""))


def answer_matches(kind: str, reference: Any, answer: Any, tokenize: bool = False) -> float:
    """``exact_match`` or ``must_include`` of the stop's answer: a numeric reference compared as a number with
    the answer's numbers, where it has any (else, as a date or a range, by WebArena's rule)."""
    number, found = as_number(reference), numbers_in(answer)
    if number is None or not found:
        return exact_match(reference, answer) if kind == "exact_match" else must_include(reference, answer, tokenize)
    if kind == "exact_match":
        return float(as_number(answer) == number)
    return float(number in found)


def string_match(spec: dict[str, Any], answer: str, intent: str, judge: Judge | None) -> tuple[float, dict[str, Any]]:
    """Score the agent's answer against ``spec["reference_answers"]``."""
    references = spec.get("reference_answers") or {}
    score, found = 1.0, {}
    for kind, value in references.items():
        if kind == "exact_match":
            part = answer_matches(kind, value, answer)
        elif kind == "must_include":
            values = value if isinstance(value, list) else [value]
            part = 1.0
            for item in values:
                part *= answer_matches(kind, item, answer, tokenize=len(values) == 1)
        elif kind == "fuzzy_match":
            part, how = _fuzzy(value, answer, intent, spec.get("string_note", ""), judge)
            found["fuzzy_match_by"] = how
        else:
            part, found[f"{kind}_error"] = 0.0, f"unknown reference kind {kind!r}"
        found[kind] = part
        score *= part
    return score, found


def _fuzzy(value: Any, answer: str, intent: str, note: str, judge: Judge | None) -> tuple[float, str]:
    if value == "N/A":
        if exact_match("N/A", answer):
            return 1.0, "exact"
        if judge is None:
            return 0.0, "exact (no judge configured)"
        try:
            return float(judge.unachievable(intent, note, answer)), "judge"
        except JudgeError as exc:
            return 0.0, str(exc)
    score = 1.0
    for reference in value if isinstance(value, list) else [value]:
        if judge is None:
            score *= exact_match(reference, answer)
            continue
        try:
            score *= float(judge.fuzzy(intent, reference, answer))
        except JudgeError as exc:
            return 0.0, str(exc)
    return score, "judge" if judge is not None else "exact (no judge configured)"


# --- URLs ------------------------------------------------------------------------------------------------


def _host_path(url: str) -> tuple[str, dict[str, list[str]]]:
    parts = urlsplit(url)
    return parts.netloc + parts.path, parse_qs(parts.query)


def url_match(spec: dict[str, Any], final_url: str) -> tuple[float, dict[str, Any]]:
    """Score the final URL against ``spec["reference_url"]`` (rule ``spec["url_note"]``)."""
    rule = spec.get("url_note") or "GOLD in PRED"
    if rule != "GOLD in PRED":
        return 0.0, {"url_match_error": f"unknown url_note {rule!r}"}
    references = [u.rstrip("/") for u in str(spec.get("reference_url", "")).split(OR)]
    paths, queries = [], defaultdict(set)
    for ref in references:
        path, query = _host_path(ref)
        paths.append(path)
        for key, values in query.items():
            queries[key].update(values)
    pred_path, pred_query = _host_path(final_url.rstrip("/"))
    base = float(any(path in pred_path for path in paths))
    query_score = 1.0
    for key, values in queries.items():
        query_score *= float(any(v in pred_query.get(key, []) for v in values))
    return base * query_score, {"final_url": final_url, "url_path": base, "url_query": query_score}


# --- page contents ---------------------------------------------------------------------------------------


def reddit_get_post_url(url: str) -> str:
    """A forum URL of a post or one of its comments cut to the post's own URL (``/f/<forum>/<id>``)."""
    parts = urlsplit(url)
    segments = [s for s in parts.path.split("/") if s]
    if len(segments) >= 3 and segments[0] == "f":
        return f"{parts.scheme}://{parts.netloc}/f/{segments[1]}/{segments[2]}"
    return url


#: the ``func:`` helpers of WebArena's configs that need nothing but the URL
HELPERS = {"reddit_get_post_url": reddit_get_post_url}


class UnsupportedHelper(ValueError):
    pass


def _resolve_url(target_url: str, last_url: str) -> str:
    if not target_url.startswith("func:"):
        return target_url
    call = HELPER.match(target_url.replace("__last_url__", last_url))
    if call is None or call.group(1) not in HELPERS:
        raise UnsupportedHelper(f"the URL helper {target_url!r} is not supported here")
    argument = call.group(2).strip().strip("'\"")
    return HELPERS[call.group(1)](argument)


def program_html(spec: dict[str, Any], page: Page) -> tuple[float, dict[str, Any]]:
    """Score page contents against ``spec["program_html"]`` (the page is left where the last target put it)."""
    score, checks = 1.0, []
    last_url = page.url
    for target in spec.get("program_html") or []:
        try:
            url = _resolve_url(str(target.get("url", "last")), last_url)
        except UnsupportedHelper as exc:
            checks.append({"error": str(exc)})
            return 0.0, {"program_html": checks}
        if url != "last":
            try:
                page.goto(url)
            except Exception as exc:
                checks.append({"url": url, "error": f"could not open it: {exc}"})
                return 0.0, {"program_html": checks}
        locator = str(target.get("locator", ""))
        if not locator.strip():
            selected = page.content()
        elif locator.startswith(("document.", "[...document.")):
            for prep in target.get("prep_actions", []):
                try:
                    page.evaluate(prep)
                except Exception:  # a preparation that fails leaves the locator to decide
                    pass
            try:
                selected = str(page.evaluate(locator))
            except Exception:
                selected = ""
        else:
            checks.append({"url": url, "error": f"the locator {locator!r} is not supported here"})
            return 0.0, {"program_html": checks}
        selected = html.unescape(selected)
        required = target.get("required_contents") or {}
        if "exact_match" in required:
            part = exact_match(required["exact_match"], selected)
        elif "must_include" in required:
            part = 1.0
            for content in required["must_include"]:
                part *= float(any(must_include(alt, selected) for alt in str(content).split(OR)))
        else:
            part = 0.0
        checks.append({"url": url, "locator": locator, "score": part, "found": selected[:300]})
        score *= part
    return score, {"program_html": checks}


# --- all of a task's evaluators --------------------------------------------------------------------------


def evaluate(config: dict[str, Any], answer: str, page: Page, judge: Judge | None = None) -> Evaluation:
    """The product of the config's evaluators for the agent's final ``answer`` and ``page``."""
    spec = config["eval"]
    final_url = page.url  # before a program-HTML target moves the page
    result = Evaluation(1.0, {"answer": answer})
    for kind in spec["eval_types"]:
        if kind == "string_match":
            score, found = string_match(spec, answer, config.get("intent", ""), judge)
        elif kind == "url_match":
            score, found = url_match(spec, final_url)
        elif kind == "program_html":
            score, found = program_html(spec, page)
        else:
            score, found = 0.0, {f"{kind}_error": "unknown evaluator"}
        result.details[kind] = score
        result.details.update(found)
        result.score *= score
    return result
