"""The site's search engine: BM25 (``bm25s``) over each product's title, description, first bullet point
and options, with English stop words removed and words stemmed (``PyStemmer``), as WebShop's Lucene index
did.

One index serves every session of a catalog.  Building it takes seconds at 100,000 products, so it is
saved under a cache folder named by a hash of the indexed text and loaded from there next time (memory-
mapped, so several server processes share its pages).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import bm25s
import numpy as np
import Stemmer

log = logging.getLogger("agentenv_webshop.search")

#: results a search returns at most (WebShop's)
SEARCH_LIMIT = 50
#: bump when the way documents or queries are tokenised changes: it invalidates cached indexes
INDEX_FORMAT = 1

WORD = re.compile(r"(?u)\b\w\w+\b")
STOPWORDS = frozenset(bm25s.stopwords.STOPWORDS_EN)
_stemmer = Stemmer.Stemmer("english")


@lru_cache(maxsize=100_000)
def _stem(word: str) -> str:
    return _stemmer.stemWord(word)


def tokens(text: str) -> list[str]:
    """The terms of ``text``: lower-cased words of two or more characters, stop words out, stemmed."""
    return [_stem(w) for w in WORD.findall(text.lower()) if w not in STOPWORDS]


class SearchIndex:
    """BM25 over a list of documents; a search answers document positions, best first."""

    def __init__(self, retriever: bm25s.BM25, size: int) -> None:
        self.retriever = retriever
        self.size = size
        self.vocabulary = retriever.vocab_dict

    @classmethod
    def build(cls, documents: Sequence[str]) -> SearchIndex:
        retriever = bm25s.BM25()
        retriever.index([tokens(d) for d in documents], show_progress=False)
        return cls(retriever, len(documents))

    @classmethod
    def cached(cls, documents: Sequence[str], cache_dir: Path | None) -> SearchIndex:
        """The index of ``documents``: loaded from ``cache_dir`` when an index of the same text is there,
        else built and saved there (``None``: built, not saved)."""
        if cache_dir is None:
            return cls.build(documents)
        folder = Path(cache_dir) / f"bm25-{fingerprint(documents)}"
        if (folder / "size.json").exists():
            try:
                retriever = bm25s.BM25.load(str(folder), mmap=True, show_progress=False)
                return cls(retriever, json.loads((folder / "size.json").read_text()))
            except (OSError, ValueError, KeyError) as exc:  # a damaged cache is rebuilt, not trusted
                log.warning(
                    "rebuilding the search index: the cached one at %s does not load (%s)", folder, exc
                )
        index = cls.build(documents)
        index.save(folder)
        return index

    def save(self, folder: Path) -> None:
        """Write the index to ``folder`` whole or not at all (another process may be writing it too)."""
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
        try:
            self.retriever.save(str(staging), show_progress=False)
            (staging / "size.json").write_text(json.dumps(self.size))
            if folder.exists():
                shutil.rmtree(folder, ignore_errors=True)
            os.replace(staging, folder)
        except OSError as exc:  # a read-only or full disk: the index still serves from memory
            log.warning("could not cache the search index at %s: %s", folder, exc)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def search(self, query: str, limit: int = SEARCH_LIMIT) -> list[int]:
        """Positions of the documents matching ``query`` best (those sharing no term are left out)."""
        terms = [t for t in tokens(query) if t in self.vocabulary]
        if not terms or self.size == 0:
            return []
        scores = self.retriever.get_scores(terms)  # (``retrieve`` would start a tqdm thread per process)
        k = min(limit, self.size)
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.lexsort((top, -scores[top]))]  # best first; ties in catalog order
        return [int(i) for i in top if scores[i] > 0]


def fingerprint(documents: Sequence[str]) -> str:
    """A hash of the documents, the index format and the library's version: the cache key."""
    digest = hashlib.sha256(f"{INDEX_FORMAT}:{bm25s.__version__}:{len(documents)}".encode())
    for document in documents:
        digest.update(document.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:20]


__all__ = ["SEARCH_LIMIT", "SearchIndex", "tokens"]
