"""The viewer's web app: results files (the JSONL that ``eval`` and ``collect`` write) behind a small JSON API
and one static page.

    GET /                        the page (static/index.html, static/viewer.js)
    GET /api/runs                the files loaded, and the envs and task types in them
    GET /api/episodes?run=0&env=babyai&task_type=...&success=true     one run's episodes, filtered
    GET /api/episode?run=0&key=babyai_3#0                              one episode, turn by turn
    GET /api/picture?run=0&key=babyai_3#0&round=2                      the env's picture after that round (PNG)

An episode's key is ``<item id>#<sample>``; the same key in two runs is the same task, so the page puts
them side by side.  Pictures come from replaying the episode in this process on an env whose class has a
``render`` query answering a PNG (BabyAI); for the others the answer says why there is none.
"""

from __future__ import annotations

import base64
import functools
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Query, Request
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.middleware.trustedhost import TrustedHostMiddleware

from agentenv.data.trajectory import Trajectory, check_records_file, read_trajectories

STATIC = Path(__file__).parent / "static"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@dataclass
class Run:
    """One results file: an agent's episodes, by key."""

    label: str
    path: Path
    episodes: dict[str, Trajectory]


def episode_key(t: Trajectory) -> str:
    return f"{t.item_id}#{t.meta.get('sample', 0)}"


def load_runs(paths: list[str | os.PathLike]) -> list[Run]:
    """Each file as a :class:`Run` labelled by its name (its folder's too where two names clash); the last
    record of an episode wins, as when ``eval`` resumes."""
    paths = [Path(p) for p in paths]
    resolved = [p.resolve() for p in paths]
    for p, where in zip(paths, resolved, strict=True):
        if p.is_dir():  # a run's folder, or a dataset that collect exported
            inside = sorted(f.name for f in p.glob("*.jsonl"))
            hint = f"give a file in it ({', '.join(inside[:3])})" if inside else "give the results files (.jsonl) of `agentenv eval` or `collect`"
            raise FileNotFoundError(f"{p} is a folder, not a results file: {hint}")
        if not p.is_file():
            raise FileNotFoundError(f"no such results file: {p}")
        check_records_file(p, "give the results files of `agentenv eval` or `collect`")
        if resolved.count(where) > 1:
            raise ValueError(f"{p} is given twice: give each results file once")
    stems = [p.stem for p in paths]
    runs = []
    for p, stem in zip(paths, stems, strict=True):
        label = f"{p.parent.name}/{stem}" if stems.count(stem) > 1 else stem
        episodes = {episode_key(t): t for t in read_trajectories(p)}
        if not episodes:
            raise ValueError(f"{p} holds no episode: give a file that `agentenv eval` or `collect` wrote with --out")
        runs.append(Run(label, p, episodes))
    return runs


def order(t: Trajectory) -> tuple[str, int, str]:
    """Episodes by env, then task index (item ids that end in no number last), then key."""
    number = t.item_id.rsplit("_", 1)[-1]
    numeric = number.isascii() and number.isdigit() and len(number) < 19  # not "²", nor past int64
    return t.env, int(number) if numeric else sys.maxsize, episode_key(t)


def summary(t: Trajectory) -> dict[str, Any]:
    """What the episode list shows of an episode."""
    return {
        "key": episode_key(t),
        "item_id": t.item_id,
        "env": t.env,
        "task_type": str(t.meta.get("task_type") or t.env),
        "success": t.success,
        "reward": t.reward,
        "rounds": t.meta.get("rounds", sum(1 for turn in t.conversations[2:] if turn.role == "gpt")),
        "stop_reason": t.meta.get("stop_reason"),
    }


def turns(t: Trajectory) -> list[dict[str, Any]]:
    """The conversation with each reply's round and reward: the instruction and ``Ok.`` (round 0), then
    observation, reply, observation ... and the observation that ended the episode, when it was kept."""
    rewards = t.meta.get("rewards")
    rewards = [r if isinstance(r, int | float) and math.isfinite(r) else None for r in rewards] if isinstance(
        rewards, list) else []
    out, round_ = [], 0
    for i, turn in enumerate(t.conversations):
        item: dict[str, Any] = {"role": turn.role, "value": turn.value, "round": round_}
        if turn.role == "gpt" and i >= 2:
            round_ += 1
            item["round"] = round_
            item["reward"] = rewards[round_ - 1] if round_ <= len(rewards) else None
        out.append(item)
    if "final_observation" in t.meta:
        out.append({"role": "human", "value": t.meta["final_observation"], "round": round_, "final": True})
    return out


def picture_reason(env: str) -> str | None:
    """Why ``env``'s episodes get no picture here, or ``None`` when they do."""
    from agentenv.registry import UnknownEnv, env_class

    try:
        cls = env_class(env)
    except UnknownEnv:
        return f"no picture: {env} is not installed here"
    if "render" not in cls.wire.queries:
        return f"no picture: {env} has no render"
    return None


def render(t: Trajectory, round_: int) -> bytes:
    """Replay ``t`` in this process for ``round_`` rounds and render the env (a PNG)."""
    from agentenv.registry import env_class
    from agentenv.session import LocalSession

    cls = env_class(t.env)
    replies = [turn.value for turn in t.conversations[2:] if turn.role == "gpt"]
    with cls.shared(), LocalSession(cls) as session:
        session.reset(t.data_idx)
        for reply in replies[:round_]:
            if session.step(reply).done:
                break
        image = session.query("render")
    if isinstance(image, str) and image.startswith("data:image/png;base64,"):  # AgentGym's shape
        image = base64.b64decode(image.partition(",")[2])
    if not isinstance(image, bytes) or not image.startswith(PNG_MAGIC):
        raise ValueError(f"{t.env}'s render is not a PNG image")
    return image


def create_app(paths: list[str | os.PathLike]) -> FastAPI:
    """The viewer over the results files ``paths``."""
    runs = load_runs(paths)
    app = FastAPI(title="agentenv view", docs_url=None, redoc_url=None)
    # a page elsewhere that points its own name at 127.0.0.1 (DNS rebinding) must not read the episodes
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=["127.0.0.1", "localhost"])

    @app.middleware("http")
    async def hardened(request: Request, call_next: Any) -> Response:
        response = await call_next(request)
        response.headers["Content-Security-Policy"] = (
            "default-src 'self'; style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
        )
        response.headers["X-Content-Type-Options"] = "nosniff"
        return response

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    def episode(run: int, key: str) -> Trajectory:
        if not 0 <= run < len(runs):
            raise HTTPException(404, f"no run {run}")
        if key not in runs[run].episodes:
            raise HTTPException(404, f"{runs[run].label} has no episode {key}")
        return runs[run].episodes[key]

    @functools.lru_cache(maxsize=256)
    def cached_render(run: int, key: str, round_: int) -> bytes:
        return render(episode(run, key), round_)

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    @app.get("/api/runs")
    def list_runs() -> dict[str, Any]:
        every = [t for r in runs for t in r.episodes.values()]
        return {
            "runs": [{"id": i, "label": r.label, "path": str(r.path), "episodes": len(r.episodes)} for i, r in enumerate(runs)],
            "envs": sorted({t.env for t in every}),
            "task_types": sorted({summary(t)["task_type"] for t in every}),
        }

    @app.get("/api/episodes")
    def list_episodes(
        run: int = 0, env: str = "", task_type: str = "", success: bool | None = None, other: int | None = None,
    ) -> list[dict[str, Any]]:
        """One run's episodes passing the filters; with ``other``, each row also says how that run did."""
        if not 0 <= run < len(runs):
            raise HTTPException(404, f"no run {run}")
        rows = []
        for t in sorted(runs[run].episodes.values(), key=order):
            row = summary(t)
            if (env and row["env"] != env) or (task_type and row["task_type"] != task_type):
                continue
            if success is not None and row["success"] != success:
                continue
            if other is not None and 0 <= other < len(runs):
                theirs = runs[other].episodes.get(row["key"])
                row["other_success"] = theirs.success if theirs else None
            rows.append(row)
        return rows

    @app.get("/api/episode")
    def show_episode(run: int, key: str = Query(...)) -> dict[str, Any]:
        t = episode(run, key)
        return summary(t) | {"run": runs[run].label, "turns": turns(t), "picture": picture_reason(t.env)}

    @app.get("/api/picture", responses={200: {"content": {"image/png": {}}}})
    def picture(run: int, key: str, round: int = 0) -> Response:  # noqa: A002 - the query's name
        t = episode(run, key)
        reason = picture_reason(t.env)
        if reason:
            raise HTTPException(404, reason)
        try:
            return Response(cached_render(run, key, max(round, 0)), media_type="image/png")
        except Exception as exc:  # a replay that fails (an env changed since the run) says why
            raise HTTPException(500, f"no picture: the replay failed: {type(exc).__name__}: {exc}") from None

    return app
