"""Academia goals in the styles of AgentGym's (single lookups, comparisons, multi-hop questions over the two
graphs), with expert plans."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from functools import lru_cache

from ..base import PlanBuilder, Task, task_rng
from ..records import AdditionalInfo, TaskRecord
from .backend import AcademiaBackend
from .world import academia

#: goals that visit every paper or collaborator of an author take authors with at most this many
MAX_FAN_OUT = 5


class Goal:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.world = academia()
        self.plan = PlanBuilder(AcademiaBackend(self.world))
        self.loaded: set[str] = set()

    def author(self, fan_out: str | None = None) -> str:
        names = sorted(self.world.authors)
        if fan_out == "papers":
            names = [a for a in names if 2 <= len(self.world.authors.nodes[a]["papers"]) <= MAX_FAN_OUT]
        elif fan_out == "collaborators":
            names = [a for a in names if 2 <= self.world.authors.degree(a) <= MAX_FAN_OUT]
        return self.rng.choice(names)

    def paper(self) -> str:
        return self.rng.choice(sorted(self.world.papers))

    def load(self, net: str, why: str) -> None:
        if net not in self.loaded:
            self.loaded.add(net)
            self.plan.call(f"{why} I load the {net} first.", f"load{net}")

    def paper_node(self, title: str, why: str = "") -> dict:
        self.load("PaperNet", "I need paper attributes, which are in the PaperNet.")
        return self.plan.call(f"{why}I check the attributes of '{title}'.", "paperNodeCheck", node=title)

    def author_node(self, name: str, why: str = "") -> dict:
        self.load("AuthorNet", "I need author attributes, which are in the AuthorNet.")
        return self.plan.call(f"{why}I check {name}'s attributes.", "authorNodeCheck", node=name)

    def collaborators(self, name: str) -> list[str]:
        self.load("AuthorNet", "Collaborations are in the AuthorNet.")
        return self.plan.call(f"{name}'s collaborators are their neighbours in the AuthorNet.", "neighbourCheck",
                              graph="AuthorNet", node=name)


def mutual_collaborators(g: Goal):
    a = g.author()
    b = g.rng.choice(sorted(g.world.authors.neighbors(a)) or [g.author()])
    if a == b:
        return None
    mutual = set(g.collaborators(a)) & set(g.collaborators(b))
    return (f"How many mutual collaborators do {a} and {b} share? Please give me a numerical value as an answer.",
            "easy", len(mutual), f"Their collaborator lists share {sorted(mutual)}: {len(mutual)} people.")


def most_cited_paper(g: Goal):
    a = g.author("papers")
    titles = g.author_node(a, f"The goal asks about {a}'s papers. ")["papers"]
    counts = {t: g.paper_node(t, "For its citation count, ")["n_citation"] for t in titles}
    best = max(counts, key=counts.get)
    if list(counts.values()).count(counts[best]) > 1:
        return None
    return (f"Which paper by {a} has the most citations in the citation network?", "hard", best,
            f"Citation counts are {counts}; the most cited is '{best}'.")


def top_venue(g: Goal):
    a = g.author("papers")
    titles = g.author_node(a, f"The goal asks about {a}'s papers. ")["papers"]
    venues = Counter(g.paper_node(t, "For its venue, ")["venue"] for t in titles)
    (best, n), *rest = venues.most_common()
    if rest and rest[0][1] == n:
        return None
    return (f"In the citation network, which venue has the most publications by {a}?", "hard", best,
            f"The venues of {a}'s papers count {dict(venues)}; the most frequent is {best}.")


def coauthored_citations(g: Goal):
    a = g.author()
    partners = [b for b in sorted(g.world.authors.neighbors(a))
                if len(g.world.authors.edges[a, b]["collaborative_papers"]) <= MAX_FAN_OUT - 1]
    if not partners:
        return None
    b = g.rng.choice(partners)
    g.load("AuthorNet", "Shared papers are on the AuthorNet's edges.")
    titles = g.plan.call(f"The edge between {a} and {b} lists their collaborative papers.", "authorEdgeCheck",
                         node1=a, node2=b)["collaborative_papers"]
    total = sum(g.paper_node(t, "For its citation count, ")["n_citation"] for t in titles)
    return (f"How many citations do papers co-authored by {a} and {b} have in the citation network? Please give me "
            "a numerical value as an answer.", "hard", total,
            f"Their {len(titles)} shared paper(s) have {total} citations in all.")


def top_collaborator(g: Goal):
    a = g.author("collaborators")
    counts = {}
    for b in g.collaborators(a):
        counts[b] = len(g.plan.call(f"I count the papers {a} wrote with {b}.", "authorEdgeCheck", node1=a,
                                    node2=b)["collaborative_papers"])
    best = max(counts, key=counts.get)
    if list(counts.values()).count(counts[best]) > 1:
        return None
    return (f"Who has the most collaborations with {a} in the citation network?", "medium", best,
            f"Shared paper counts are {counts}; {best} has the most.")


def paper_orgs(g: Goal):
    title = g.paper()
    team = g.paper_node(title, "The authors are among the paper's attributes: ")["authors"]
    if len(team) > 4:
        return None
    orgs = sorted({g.author_node(a, "For their organisation, ")["org"] for a in team})
    return (f"Which organizations were involved in the research titled '{title}'? Please answer in the form of a "
            "list ['org1', 'org2', ...].", "medium", orgs, f"The authors' organisations are {orgs}.")


def paper_authors(g: Goal):
    title = g.paper()
    team = sorted(g.paper_node(title, "The authors are among the paper's attributes: ")["authors"])
    return (f"Who wrote the paper titled '{title}'? Please answer in the form of a list ['author1', 'author2', ...].",
            "easy", team, f"The authors are {team}.")


def authors_overlap(g: Goal):
    first = g.paper()
    second = g.paper()
    if g.rng.random() < 0.5:  # half the pairs share an author
        shared = sorted(t for a in g.world.papers.nodes[first]["authors"]
                        for t in g.world.authors.nodes[a]["papers"] if t != first)
        second = g.rng.choice(shared) if shared else second
    if first == second:
        return None
    teams = [set(g.paper_node(t, "For its authors, ")["authors"]) for t in (first, second)]
    answer = "Yes" if teams[0] & teams[1] else "No"
    return (f"Do the authors of '{first}' and '{second}' have any overlap? Please respond with 'Yes' or 'No'.",
            "easy", answer, f"The author lists are {sorted(teams[0])} and {sorted(teams[1])}, so: {answer}.")


def author_org(g: Goal):
    a = g.author()
    org = g.author_node(a, "The organisation is an author attribute: ")["org"]
    return (f"Which organization is {a} affiliated with?", "easy", org, f"{a} is at {org}.")


def same_org(g: Goal):
    a, b = g.author(), g.author()
    if g.rng.random() < 0.5:  # half the pairs work at one organisation
        org = g.world.authors.nodes[a]["org"]
        b = g.rng.choice(sorted(x for x in g.world.authors if g.world.authors.nodes[x]["org"] == org))
    if a == b:
        return None
    orgs = [g.author_node(x, "For the organisation, ")["org"] for x in (a, b)]
    answer = "Yes" if orgs[0] == orgs[1] else "No"
    return (f"Is {a} affiliated with the same organization as {b}? Please answer 'Yes' or 'No'.", "easy", answer,
            f"They are at {orgs[0]} and {orgs[1]}, so: {answer}.")


def citing_count(g: Goal):
    title = g.paper()
    g.load("PaperNet", "Citations are the PaperNet's links.")
    citing = g.plan.call(f"The papers citing '{title}' are its neighbours in the PaperNet.", "neighbourCheck",
                         graph="PaperNet", node=title)
    return (f"How many papers within the citation network reference the work titled '{title}'? Please give me a "
            "numerical value as an answer.", "easy", len(citing), f"{len(citing)} papers cite it.")


def compare_papers(g: Goal):
    first, second = g.paper(), g.paper()
    attribute, question, pick = g.rng.choice((
        ("n_citation", "Which paper has received more citations: '{a}' or '{b}'?", max),
        ("year", "Which paper was published first: '{a}' or '{b}'?", min),
    ))
    values = {t: g.paper_node(t, f"For its {attribute}, ")[attribute] for t in (first, second)}
    if first == second or values[first] == values[second]:
        return None
    answer = pick(values, key=values.get)
    return question.format(a=first, b=second), "easy", answer, f"Their {attribute} values are {values}: '{answer}'."


def same_venue(g: Goal):
    first, second = g.paper(), g.paper()
    with_year = g.rng.random() < 0.5
    if g.rng.random() < 0.5:  # half the pairs appeared in one venue (and, when asked, in one year)
        venue, year = (g.world.papers.nodes[first][k] for k in ("venue", "year"))
        alike = sorted(t for t, n in g.world.papers.nodes(data=True) if n["venue"] == venue and t != first
                       and (n["year"] == year or not with_year))
        second = g.rng.choice(alike) if alike else second
    if first == second:
        return None
    nodes = [g.paper_node(t, "For its venue, ") for t in (first, second)]
    same = nodes[0]["venue"] == nodes[1]["venue"] and (not with_year or nodes[0]["year"] == nodes[1]["year"])
    answer = "Yes" if same else "No"
    asked = "in the same venue and in the same year" if with_year else "in the same venue"
    return (f"Are the articles '{first}' and '{second}' published {asked}? Please answer 'Yes' or 'No'.", "easy",
            answer, f"They appeared in {nodes[0]['venue']} ({nodes[0]['year']}) and {nodes[1]['venue']} "
                    f"({nodes[1]['year']}), so: {answer}.")


def both_conference(g: Goal):
    conference = sorted(t for t, n in g.world.papers.nodes(data=True) if n["doc_type"] == "Conference")
    if g.rng.random() < 0.5:  # the answer is drawn first: half the pairs are two conference papers
        first, second = g.rng.sample(conference, 2)
    else:  # at least one is not, in either place
        other = sorted(set(g.world.papers) - set(conference))
        first, second = g.rng.choice(other), g.paper()
        if g.rng.random() < 0.5:
            first, second = second, first
    if first == second:
        return None
    kinds = [g.paper_node(t, "For its document type, ")["doc_type"] for t in (first, second)]
    answer = "Yes" if kinds == ["Conference", "Conference"] else "No"
    return (f"Are '{first}' and '{second}' both conference papers? Please answer 'Yes' or 'No'.", "easy", answer,
            f"Their document types are {kinds}, so: {answer}.")


def same_org_collaborators(g: Goal):
    a = g.author("collaborators")
    org = g.author_node(a, "I need the author's organisation first: ")["org"]
    same = sorted(b for b in g.collaborators(a) if g.author_node(b, f"Is this collaborator at {org}? ")["org"] == org)
    if not same:
        return None
    return (f"Who are the collaborators of {a} from the same organization as them? Please provide the names in the "
            "following format: ['author1', 'author2', ...]", "hard", same, f"Those at {org} are {same}.")


KINDS: dict[str, Callable] = {
    "mutual_collaborators": mutual_collaborators, "most_cited_paper": most_cited_paper, "top_venue": top_venue,
    "coauthored_citations": coauthored_citations, "top_collaborator": top_collaborator, "paper_orgs": paper_orgs,
    "paper_authors": paper_authors, "authors_overlap": authors_overlap, "author_org": author_org,
    "same_org": same_org, "citing_count": citing_count, "compare_papers": compare_papers, "same_venue": same_venue,
    "both_conference": both_conference, "same_org_collaborators": same_org_collaborators,
}


@lru_cache(maxsize=4096)
def academia_task(idx: int) -> Task:
    """Generated Academia task ``idx``."""
    rng = task_rng("academia", idx)
    while True:
        kind = rng.choice(sorted(KINDS))
        goal = Goal(rng)
        written = KINDS[kind](goal)
        if written is not None:
            break
    text, difficulty, answer, last_thought = written
    plan, subgoals = goal.plan.finish(f"{last_thought} I give the answer.", answer)
    record = TaskRecord(id=idx, goal=text, subgoals=subgoals, difficulty=difficulty,
                        additional_info=AdditionalInfo(answer=answer, goal_type=0, tool="academia"),
                        task="tool-query")
    return Task(record, plan, kind)
