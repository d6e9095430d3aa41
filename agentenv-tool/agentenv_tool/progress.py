"""Progress rate: the share of a goal's gold subgoals an episode's tool calls have reached (AgentBoard's rule).

Every successful call's cleaned result is recorded; a gold subgoal is reached when some recorded result
matches it, each result reaching at most one subgoal.  The rate is kept as a running maximum.  The last gold
subgoal is the answer (or, for Sheet and TODO operations, the finished state): only a correct ``finish``
reaches it, and a correct ``finish`` counts every subgoal as reached, so a rate of 1 means success.
"""

from __future__ import annotations

from typing import Any

from .matching import same_value


class Progress:
    """The subgoals reached so far by one episode's calls."""

    def __init__(self, subgoals: list[Any], *, places: bool = False) -> None:
        #: the gold subgoals tool results may reach (the answer, always last, is left to ``finish``)
        self.subgoals = list(subgoals[:-1])
        self.total = max(len(subgoals), 1)
        self.places = places
        self.results: list[Any] = []
        self.finished_correctly = False
        self.rate = 0.0

    def record(self, result: Any) -> float:
        """Record a call's cleaned result; returns the rate."""
        self.results.append(result)
        return self._update()

    def finish(self, correct: bool) -> float:
        """The episode's ``finish``: a correct one reaches every subgoal."""
        self.finished_correctly = correct
        return self._update()

    def reached(self) -> list[bool]:
        """Which of the subgoals (the answer last) are reached: a maximum matching of subgoals to results (a
        result taken by the first subgoal it matched could leave a later one unreached that only it matches)."""
        import networkx as nx

        graph = nx.Graph()
        goals = [("goal", i) for i in range(len(self.subgoals))]
        graph.add_nodes_from(goals)
        graph.add_edges_from(
            (("goal", i), ("result", j))
            for i, subgoal in enumerate(self.subgoals)
            for j, result in enumerate(self.results)
            if same_value(result, subgoal, places=self.places)
        )
        matched = nx.bipartite.maximum_matching(graph, top_nodes=goals)
        return [*(goal in matched or self.finished_correctly for goal in goals), self.finished_correctly]

    def _update(self) -> float:
        self.rate = max(self.rate, sum(self.reached()) / self.total)
        return self.rate
