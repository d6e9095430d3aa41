"""Client-side errors: one exception class per status the server kit answers with."""

from __future__ import annotations


class EnvError(Exception):
    """An environment server answered with an error status (``status``) and message."""

    status: int = 0

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status

    def __str__(self) -> str:
        return f"[{self.status}] {self.message}" if self.status else self.message


class Unauthorized(EnvError):
    status = 401


class SessionNotFound(EnvError):
    status = 404


class EpisodeFinished(EnvError):
    """Step before a reset or after the episode ended (409)."""

    status = 409


class BadRequest(EnvError):
    status = 422


class ServerFull(EnvError):
    status = 429


class EnvCrashed(EnvError):
    """The environment crashed; the server closed that session (500)."""

    status = 500


class ServerUnreachable(EnvError):
    """No answer after every retry (connection refused, reset, timed out)."""


_BY_STATUS = {cls.status: cls for cls in (Unauthorized, SessionNotFound, EpisodeFinished, BadRequest, ServerFull, EnvCrashed)}


def error_for(status: int, message: str) -> EnvError:
    return _BY_STATUS.get(status, EnvError)(message, status)
