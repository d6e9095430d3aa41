"""The academia tools: AgentGym's names, arguments and answers over the local graphs."""

from __future__ import annotations

import copy
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints

from ..base import ToolBackend
from ..tools import ToolError, tool
from .world import Academia

#: spaces around a name are no part of it (as Movie's and TODO's ids are stripped)
Node = Annotated[str, StringConstraints(strip_whitespace=True), Field(max_length=300,
                                                                      description="a paper's title or an author's name")]


class AcademiaBackend(ToolBackend):
    """The graphs of one episode: each must be loaded before it is queried."""

    def __init__(self, world: Academia) -> None:
        self.world = world
        self.paper_net_loaded = False
        self.author_net_loaded = False

    def _papers(self):
        if not self.paper_net_loaded:
            raise ToolError("Please load the PaperNet first.")
        return self.world.papers

    def _authors(self):
        if not self.author_net_loaded:
            raise ToolError("Please load the AuthorNet first.")
        return self.world.authors

    @staticmethod
    def _node(graph, node: str, name: str) -> str:
        if node not in graph:
            raise ToolError(f"There is no node named {node[:120]} in the {name}.")
        return node

    @tool("Load PaperNet, the citation graph: papers, each linked to the papers citing it.")
    def loadPaperNet(self) -> str:  # noqa: N802 - AgentGym's tool name
        self.paper_net_loaded = True
        return "PaperNet is loaded."

    @tool("Load AuthorNet, the co-author graph: authors, each linked to their collaborators.")
    def loadAuthorNet(self) -> str:  # noqa: N802
        self.author_net_loaded = True
        return "AuthorNet is loaded."

    @tool("List a node's neighbours: in PaperNet the papers citing a paper, in AuthorNet an author's collaborators.",
          "a list of titles or names.")
    def neighbourCheck(self, graph: Literal["PaperNet", "AuthorNet"], node: Node) -> list[str]:  # noqa: N802
        net = self._papers() if graph == "PaperNet" else self._authors()
        return sorted(net.neighbors(self._node(net, node, graph)))

    @tool("Get a paper's attributes (its title is the node).",
          "{title, authors, year, venue, n_citation, keywords, doc_type}.")
    def paperNodeCheck(self, node: Node) -> dict[str, Any]:  # noqa: N802
        papers = self._papers()
        return copy.deepcopy(papers.nodes[self._node(papers, node, "PaperNet")])

    @tool("Get an author's attributes (their name is the node).", "{name, org, papers}.")
    def authorNodeCheck(self, node: Node) -> dict[str, Any]:  # noqa: N802
        authors = self._authors()
        return copy.deepcopy(authors.nodes[self._node(authors, node, "AuthorNet")])

    @tool("Get the edge between two authors.", "{collaborative_papers: [titles]}.")
    def authorEdgeCheck(self, node1: Node, node2: Node) -> dict[str, Any]:  # noqa: N802
        authors = self._authors()
        self._node(authors, node1, "AuthorNet"), self._node(authors, node2, "AuthorNet")
        if not authors.has_edge(node1, node2):
            raise ToolError(f"There is no edge between {node1[:120]} and {node2[:120]}.")
        return copy.deepcopy(authors.edges[node1, node2])

    @tool("Get the edge between two papers (one cites the other).", "{citing_paper, cited_paper}.")
    def paperEdgeCheck(self, node1: Node, node2: Node) -> dict[str, Any]:  # noqa: N802
        papers = self._papers()
        self._node(papers, node1, "PaperNet"), self._node(papers, node2, "PaperNet")
        for cited, citing in ((node1, node2), (node2, node1)):
            if papers.has_edge(cited, citing):
                return {"citing_paper": citing, "cited_paper": cited}
        raise ToolError(f"There is no edge between {node1[:120]} and {node2[:120]}.")
