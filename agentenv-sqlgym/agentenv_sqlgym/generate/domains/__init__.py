"""The generated domains, one module each: a database, how to fill it, and its own question templates."""

from __future__ import annotations

from ..spec import Domain
from . import banking, flights, football, hospital, library, movies, retail, school

#: every domain, in the order their tasks take turns within a split
DOMAINS: tuple[Domain, ...] = (
    retail.DOMAIN,
    school.DOMAIN,
    hospital.DOMAIN,
    flights.DOMAIN,
    library.DOMAIN,
    football.DOMAIN,
    movies.DOMAIN,
    banking.DOMAIN,
)
