"""The academic world: a citation graph of papers and a co-author graph of authors (``networkx``), generated
from one seed.

Authors belong to research groups, each at one organisation; a paper's authors come mostly from one group,
now and then with a guest from another.  Papers cite earlier papers, mostly of their own topic.  PaperNet is
directed from a paper to the papers citing it (its neighbours are its citations); AuthorNet joins co-authors,
each edge holding their collaborative papers.  A paper's ``n_citation`` is the number of papers citing it here.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cache

import networkx as nx

SEED = 20240602
N_GROUPS = 40
N_PAPERS = 700

FIRST = ("Aiko Amara Anders Bao Bianca Caio Chiara Dae Dmitri Elif Enzo Fatima Florian Gustav Hamid Ilse Imani "
         "Jae Joaquin Karin Kofi Lazhar Leila Lorenzo Mads Malik Marta Mei Mohamed Nia Olga Pablo Ravi Rin Sanjay "
         "Selin Soren Tomas Valentina Xiao Yasmin Yuki Zainab").split()
LAST = ("Adeyemi Almeida Bauer Boutros Brandt Cheng Dubois Ekström Ferrari Gonzaga Haddad Holm Ivanova Jovanovic "
        "Kim Kirchner Labiod Li Lindgren Moreno Nadif Nguyen Oliveira Papadopoulos Qureshi Rahman Santos Shah "
        "Stein Takahashi Tran Ulrich Vidal Wang Yilmaz Zhang").split()
ORGS = ("MIT", "Stanford University", "Tsinghua University", "University of Oxford", "ETH Zurich",
        "University of Toronto", "Peking University", "KAIST", "University of Tokyo", "EPFL",
        "Carnegie Mellon University", "University of Cambridge", "National University of Singapore",
        "Technical University of Munich", "Sorbonne University", "University of Melbourne", "Fraunhofer IGD",
        "Chung-Ang University", "Google Research", "Microsoft Research")
VENUES = (("NeurIPS", "Conference"), ("ICML", "Conference"), ("ACL", "Conference"), ("KDD", "Conference"),
          ("CVPR", "Conference"), ("AAAI", "Conference"), ("WWW", "Conference"), ("SIGIR", "Conference"),
          ("IEEE Transactions on Knowledge and Data Engineering", "Journal"),
          ("Journal of Machine Learning Research", "Journal"), ("Pattern Recognition", "Journal"),
          ("Information Sciences", "Journal"))
TOPICS = {
    "graphs": ("Graph Neural Networks", "Node Classification", "Link Prediction", "Graph Clustering"),
    "language": ("Relation Extraction", "Question Answering", "Machine Translation", "Text Summarization"),
    "vision": ("Object Detection", "Image Segmentation", "Face Anti-Spoofing", "Video Understanding"),
    "learning": ("Reinforcement Learning", "Federated Learning", "Contrastive Learning", "Meta-Learning"),
    "data": ("Traffic Forecasting", "Anomaly Detection", "Recommendation", "Time Series Forecasting"),
}
METHODS = ("Attention", "Transformers", "Diffusion Models", "Variational Inference", "Graph Convolution",
           "Knowledge Distillation", "Self-Supervision", "Sparse Coding", "Optimal Transport", "Prompt Tuning")
QUALIFIERS = ("Efficient", "Robust", "Scalable", "Interpretable", "Adaptive", "Decoupled", "Hierarchical",
              "Dynamic", "Lightweight", "Unsupervised")


@dataclass(frozen=True)
class Academia:
    """The two graphs, keyed by paper title and author name."""

    papers: nx.DiGraph
    authors: nx.Graph


@cache
def academia() -> Academia:
    """The world (the same on every machine)."""
    rng = random.Random(SEED)
    names = [f"{f} {last}" for f in FIRST for last in LAST]
    rng.shuffle(names)
    topics = sorted(TOPICS)
    groups = []
    for g in range(N_GROUPS):
        org, topic = rng.choice(ORGS), topics[g % len(topics)]
        groups.append((org, topic, [names.pop() for _ in range(rng.randint(4, 9))]))
    authors = nx.Graph()
    for org, _topic, members in groups:
        for member in members:
            authors.add_node(member, name=member, org=org, papers=[])
    papers = nx.DiGraph()
    titles: set[str] = set()
    by_topic: dict[str, list[str]] = {t: [] for t in topics}
    for _ in range(N_PAPERS):
        org, topic, members = rng.choice(groups)
        while True:
            title = (f"{rng.choice(QUALIFIERS)} {rng.choice(METHODS)} for {rng.choice(TOPICS[topic])}"
                     + rng.choice(("", " with Few Labels", " at Scale", " in the Wild", ": A Unified View")))
            if title not in titles:
                break
        titles.add(title)
        team = rng.sample(members, rng.randint(1, min(3, len(members))))
        if rng.random() < 0.3:
            team.append(rng.choice(rng.choice(groups)[2]))
        team = list(dict.fromkeys(team))
        venue, doc_type = rng.choice(VENUES)
        year = rng.randint(2010, 2023)
        keywords = sorted(set(rng.sample(TOPICS[topic], 2)) | {rng.choice(METHODS)})
        papers.add_node(title, title=title, authors=team, year=year, venue=venue, n_citation=0, keywords=keywords,
                        doc_type=doc_type)
        earlier = [p for p in by_topic[topic] if papers.nodes[p]["year"] < year]
        others = [p for t in topics if t != topic for p in by_topic[t] if papers.nodes[p]["year"] < year]
        cited = rng.sample(earlier, min(len(earlier), rng.randint(0, 6)))
        cited += rng.sample(others, min(len(others), rng.randint(0, 1)))
        for old in cited:
            papers.add_edge(old, title)
        by_topic[topic].append(title)
        for a in team:
            authors.nodes[a]["papers"].append(title)
        for i, a in enumerate(team):
            for b in team[i + 1:]:
                if not authors.has_edge(a, b):
                    authors.add_edge(a, b, collaborative_papers=[])
                authors.edges[a, b]["collaborative_papers"].append(title)
    for title in papers:
        papers.nodes[title]["n_citation"] = papers.out_degree(title)
    authors.remove_nodes_from([a for a in list(authors) if not authors.nodes[a]["papers"]])
    return Academia(papers, authors)
