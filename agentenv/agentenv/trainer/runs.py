"""The folder of an iterative run (AgentEvol, ETO, RFT): one sub-folder per iteration with stage markers.

::

    run_config.json              the run's settings
    iter_0/ iter_1/ ...          one folder per iteration: data, model, results
      stages.json                {"explored": {...}, "filtered": {...}, "trained": {...}, "evaluated": {...}}
    summary.json                 scores per iteration and env
    curve.png                    success rate per env per iteration

A stage is recorded in ``stages.json`` (written atomically) only once its outputs are complete, so a killed
run started again with the same settings skips the finished stages and redoes the one it was in; that stage
resumes on its own (the evaluator skips finished episodes, training continues from its latest checkpoint).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentenv.data.trajectory import write_json
from agentenv.trainer.config_args import RESUMABLE_SETTINGS, changed_settings

STAGES_FILE = "stages.json"

SUMMARY_FILE = "summary.json"
RUN_CONFIG_FILE = "run_config.json"
CURVE_FILE = "curve.png"


class IterationDir:
    """``<run>/iter_<m>/`` and its stage markers."""

    def __init__(self, run_dir: str | os.PathLike, iteration: int):
        self.iteration = iteration
        self.path = Path(run_dir) / f"iter_{iteration}"

    def __truediv__(self, name: str) -> Path:
        return self.path / name

    def stages(self) -> dict[str, dict[str, Any]]:
        p = self.path / STAGES_FILE
        return json.loads(p.read_text()) if p.exists() else {}

    def done(self, stage: str) -> bool:
        return stage in self.stages()

    def info(self, stage: str) -> dict[str, Any]:
        return self.stages().get(stage, {})

    def mark(self, stage: str, **info: Any) -> None:
        """Record ``stage`` as finished, with what it produced (counts, paths, scores)."""
        stages = self.stages()
        stages[stage] = {"finished": time.strftime("%Y-%m-%dT%H:%M:%S"), **info}
        write_json(self.path / STAGES_FILE, stages)


#: what a training run (bc, dpo, grpo) writes at the top of its folder
TRAINING_RUN_FILES = ("train_config.json", "train_state.json")


def training_kind(config: Mapping[str, Any]) -> str:
    """Which trainer a training run's settings are of (``train_config.json`` does not name it)."""
    return "dpo" if "pairs" in config else "grpo" if "num_generations" in config else "bc"


def refuse_another_kind_of_run(out: Path, staged: bool, config: Mapping[str, Any] | None = None) -> None:
    """One folder, one kind of run: an iterative run (evol, rft, eto) does not write beside a training run's
    model (bc, dpo, grpo), nor a training run into an iterative run's folder (each wrote into the other's),
    nor a training run of ``config`` into another trainer's folder (its refusal said "other settings (pairs,
    warmup_ratio)", and offered --no-resume, which trains over the other's model)."""
    saved = out / TRAINING_RUN_FILES[0]
    if config is not None and saved.exists():
        try:
            kind = training_kind(json.loads(saved.read_text()))
        except (ValueError, AttributeError, TypeError):  # not a run's record: the checks after this one say so
            kind = training_kind(config)
        if kind != training_kind(config):
            raise ValueError(f"{out} holds a {kind} run: give another --output-dir (this {training_kind(config)} "
                             f"run would train over its model)")
    if staged:
        found = next((name for name in TRAINING_RUN_FILES if (out / name).exists()), None)
        if found:
            raise ValueError(f"{out} holds a training run ({found}: bc, dpo or grpo): give another --output-dir")
    elif (out / RUN_CONFIG_FILE).exists():
        raise ValueError(f"{out} holds an iterative run ({RUN_CONFIG_FILE}: evol, rft or eto): give another "
                         "--output-dir")


def check_run_config(
    run_dir: Path,
    settings: dict[str, Any],
    volatile: frozenset[str] | tuple[str, ...] = RESUMABLE_SETTINGS,
    defaults: Mapping[str, Any] | None = None,
) -> None:
    """Save the run's settings, or refuse to resume a run folder that was started with different ones
    (settings in ``volatile``, such as the number of iterations, may change between invocations; see
    :func:`~agentenv.trainer.config_args.changed_settings`).  A folder that holds nothing else (its run
    stopped before producing anything, e.g. at a mistyped path) takes the new settings.  A run folder moved
    or copied elsewhere still names the files of its first place (a copy went on exploring with the
    original's models): refused, saying where it was started."""
    path = run_dir / RUN_CONFIG_FILE
    if path.exists() and any(p.name != path.name for p in run_dir.iterdir()):
        saved = json.loads(path.read_text())
        started = Path(saved.get("output_dir", ""))
        if started.is_absolute() and started != Path(settings["output_dir"]) and any(run_dir.glob("iter_*/stages.json")):
            raise ValueError(f"{run_dir} holds a run started in {started} (moved or copied): its records name "
                             f"the files there; continue it in {started}, or start over here with --no-resume")
        changed = changed_settings(saved, settings, dict(defaults or {}), volatile)
        if changed:
            was = {**dict(defaults or {}), **saved}
            listed = "; ".join(f"{name} {was.get(name)!r} (now {settings[name]!r})" for name in changed)
            raise ValueError(
                f"{run_dir} holds a run started with other settings ({listed}); "
                "use a new output_dir, or the same settings to resume it"
            )
    write_json(path, settings)


def write_summary(
    run_dir: Path, algorithm: str, iterations: Mapping[int, Mapping[str, Any]]
) -> dict[str, Any]:
    """``summary.json`` (``{"algorithm", "iterations": [{"iteration", "model", "scores", ...}]}``) and the curve."""
    rows = [{"iteration": m, **dict(iterations[m])} for m in sorted(iterations)]
    summary = {"algorithm": algorithm, "run_dir": str(run_dir), "iterations": rows}
    write_json(run_dir / SUMMARY_FILE, summary)
    curve = {
        m: {env: s["success"] for env, s in (it.get("scores") or {}).items()} for m, it in iterations.items()
    }
    if any(curve.values()):
        plot_curve(curve, run_dir / CURVE_FILE, title=algorithm)
    return summary


def _env_columns(envs: set[str]) -> list[str]:
    """The envs of a run's table or curve, sorted, the overall mean (``all``) last; with one env, that env
    alone (its mean is the same figure)."""
    ordered = sorted(envs, key=lambda e: (e == "all", e))
    return ordered[:1] if len(ordered) == 2 and ordered[-1] == "all" else ordered


def print_summary(summary: Mapping[str, Any]) -> None:
    """A finished run's iterations as a table (success and episodes per env, and what else each recorded),
    then where its summary and curve are."""
    from rich.table import Table

    from agentenv.controller.report import table_console

    rows, run_dir = summary["iterations"], Path(summary["run_dir"])
    envs = _env_columns({env for row in rows for env in row.get("scores") or {}})
    table = Table(title=f"{summary['algorithm']}: {run_dir}")
    table.add_column("iteration", justify="right")
    table.add_column("model")
    for env in envs:
        table.add_column(f"{env} success", justify="right")
    table.add_column("")
    for row in rows:
        scores = row.get("scores") or {}
        cells = [f"{scores[e]['success']:.1%} (n={scores[e]['n']})" if e in scores else "—" for e in envs]
        extra = ", ".join(f"{k} {v}" for k, v in row.items() if k not in ("iteration", "model", "scores"))
        table.add_row(str(row["iteration"]), str(row.get("model", "")), *cells, extra)
    table_console().print(table)
    curve = run_dir / CURVE_FILE
    print(f"summary: {run_dir / SUMMARY_FILE}" + (f"; curve: {curve}" if curve.exists() else ""))


def plot_curve(success: Mapping[int, Mapping[str, float]], path: Path, title: str = "") -> Path:
    """A line per env (and the overall mean, ``all``, when there are several envs): success rate (%)
    against iteration, each point labelled with its value."""
    import matplotlib

    matplotlib.use("Agg")  # files only, never a display
    import matplotlib.pyplot as plt

    envs = _env_columns({env for per_env in success.values() for env in per_env})
    fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
    for env in envs:
        points = sorted((m, 100 * per_env[env]) for m, per_env in success.items() if env in per_env)
        style = {"linestyle": "--", "color": "black"} if env == "all" else {}
        ax.plot([m for m, _ in points], [s for _, s in points], marker="o", label=env, **style)
        for m, s in points:
            ax.annotate(f"{s:.1f}", (m, s), textcoords="offset points", xytext=(0, 6), ha="center", fontsize=8)
    ax.set_xlabel("iteration")
    ax.set_ylabel("success rate (%)")
    ax.set_xticks(sorted(success))
    ax.set_ylim(-2, 102)
    ax.grid(alpha=0.3)
    ax.legend(loc="best", fontsize="small")
    if title:
        ax.set_title(title)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def explore_stage(cfg, sources, it: IterationDir, model: str | os.PathLike, tasks, progress: bool = True) -> None:
    """The "explored" stage of iteration ``m``: ``model`` on ``tasks`` (env -> indices),
    ``cfg.samples_per_instruction`` times each at ``cfg.explore_temperature``, into ``iter_m/explore.jsonl``."""
    from agentenv.trainer.rollouts import run_until_complete, scores

    if it.done("explored"):
        return
    report = run_until_complete(
        cfg, model, sources, tasks, it / "explore.jsonl", cfg.samples_per_instruction,
        cfg.explore_temperature, cfg.seed + it.iteration, progress, title=f"iter {it.iteration} explore",
    )
    it.mark("explored", episodes=report.n, scores=scores(report), model=str(model))


def evaluate_stage(
    cfg, sources, it: IterationDir, model: str | os.PathLike, progress: bool = True
) -> dict[str, Any]:
    """The "evaluated" stage of an iteration: ``model`` on every env's ``cfg.eval_split`` or ``cfg.eval_tasks``
    (greedy unless ``cfg.eval_temperature``), into ``iter_m/eval.jsonl``; returns ``{"model", "scores"}``."""
    from agentenv.trainer.rollouts import run_until_complete, scores, task_indices

    if not it.done("evaluated"):
        tasks = {
            env: task_indices(src, cfg.eval_split, cfg.eval_tasks, cfg.eval_limit) for env, src in sources.items()
        }
        report = run_until_complete(
            cfg, model, sources, tasks, it / "eval.jsonl", 1, cfg.eval_temperature, cfg.seed, progress,
            title=f"iter {it.iteration} eval",
        )
        it.mark("evaluated", scores=scores(report), model=str(model))
    info = it.info("evaluated")
    return {"model": info["model"], "scores": info["scores"]}
