"""``agentenv view``: a local web page to browse results files (:mod:`agentenv.viewer.app`)."""

from agentenv.viewer.app import create_app

__all__ = ["create_app"]
