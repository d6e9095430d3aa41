"""Sheet: operate on a spreadsheet (sort, update, formulas, insert, delete, merge) until it matches the goal."""

from __future__ import annotations

import json
import os
import re
from typing import Any, ClassVar

from openpyxl import load_workbook

from ..base import Step, Task, ToolBackend, ToolEnv, instruction_text
from ..records import TaskRecord
from ..tools import Toolbox
from .backend import SheetBackend
from .engine import Spreadsheet
from .tables import build_workbook
from .tasks import sheet_task

INTRO = (
    "You are a spreadsheet assistant. Change the workbook's sheets as the user asks with the sheet tools: open "
    "the sheet first; cells are named in A1 notation (column letter, row number); the first row holds the "
    "titles. Tools that change the sheet answer its values as a 2-D list of strings. Call finish() when the "
    "sheet is as asked."
)
#: AgentBoard's rule for the sheet an original goal is about
_SHEET_NAME = re.compile(r'"Sheet(\d{1,2})"')


class CellProgress:
    """AgentBoard's Sheet progress: the share of the goal sheet's cells equal to the target's, the running
    maximum; finishing with the sheet equal to the target is one more cell, so only that reaches 1."""

    def __init__(self, sheets: Spreadsheet, sheet: str, target: list[list[str]], sorted_by: int | None = None) -> None:
        self.sheets, self.sheet, self.target, self.sorted_by = sheets, sheet, target, sorted_by
        self.finished_correctly = False
        self.rate = 0.0

    def current(self) -> list[list[str]]:
        """The goal sheet's values; where the target is sorted, rows tied in its key come in the target's order."""
        if self.sheet not in self.sheets.workbook.sheetnames:
            return []
        values = self.sheets.values(self.sheets.workbook[self.sheet])
        return values if self.sorted_by is None else _ties_as_in(values, self.target, self.sorted_by - 1)

    def matching(self) -> tuple[int, int]:
        """(equal cells, cells) over the larger of the two shapes."""
        now, target = self.current(), self.target
        rows = max(len(now), len(target))
        cols = max([len(r) for r in now + target] or [0])
        equal = sum(1 for i in range(rows) for j in range(cols) if _at(now, i, j) == _at(target, i, j))
        return equal, rows * cols

    def record(self, _result: Any) -> float:
        equal, cells = self.matching()
        self.rate = max(self.rate, (equal + self.finished_correctly) / (cells + 1))
        return self.rate

    def finish(self, correct: bool) -> float:
        self.finished_correctly = correct
        return self.record(None)

    def reached(self) -> list[bool]:
        equal, cells = self.matching()
        return [equal == cells, self.finished_correctly]


def _at(grid: list[list[str]], i: int, j: int) -> str:
    return grid[i][j] if i < len(grid) and j < len(grid[i]) else ""


def _ties_as_in(values: list[list[str]], target: list[list[str]], key: int) -> list[list[str]]:
    """``values`` with each run of the target's rows (below the titles) that share their ``key`` cell put in the
    target's order, where ``values`` holds those very rows at those places: a sort orders rows by the key alone."""
    aligned, start = list(values), 1
    while start < len(target):
        end = start + 1
        while end < len(target) and _at(target, end, key) == _at(target, start, key):
            end += 1
        if end - start > 1 and sorted(values[start:end]) == sorted(target[start:end]):
            aligned[start:end] = target[start:end]
        start = end
    return aligned


class SheetEnv(ToolEnv):
    name: ClassVar[str] = "sheet"
    train_size: ClassVar[int] = 120
    test_size: ClassVar[int] = 30
    splits: ClassVar[dict[str, range]] = ToolEnv.splits_for("sheet", 120, 30)
    max_rounds: ClassVar[int] = 15  # AgentGym's evaluation setting; the longest plan has 9 calls
    toolbox: ClassVar[Toolbox] = Toolbox.of(SheetBackend)
    #: every sheet tool needs an open sheet: the example is the call that opens one
    task_text: ClassVar[str] = instruction_text(INTRO, toolbox, 'open_sheet with Action Input: {"name": "Sheet1"}')
    #: a reset builds an openpyxl workbook (tens of milliseconds): off the event loop, in a worker thread
    blocking: ClassVar[bool] = True

    @classmethod
    def generate(cls, idx: int) -> Task:
        return sheet_task(idx)

    @classmethod
    def original_task(cls, record: TaskRecord) -> Task:
        thought = ("This goal comes from AgentGym's original task file, whose reference path is not JSON; I cannot "
                   "follow it here, so I finish.")
        return Task(record, (Step(thought, "finish", {}),), "agentgym")

    def open(self, task: Task) -> ToolBackend:
        config = task.record.init_config
        if config.get("workbook"):
            workbook = build_workbook(config["workbook"])
        elif os.environ.get("AGENTENV_SHEET_WORKBOOK"):  # AgentGym's own workbook, for its original tasks
            workbook = load_workbook(os.environ["AGENTENV_SHEET_WORKBOOK"])
        else:
            workbook = build_workbook([{"kind": "products", "seed": f"agentgym:{n}"} for n in range(1, 21)])
        return SheetBackend(Spreadsheet(workbook))

    def goal_sheet(self) -> str:
        record = self.task.record
        found = _SHEET_NAME.search(record.goal)
        return record.init_config.get("sheet") or (f"Sheet{found.group(1)}" if found else "Sheet1")

    def target(self) -> list[list[str]]:
        answer = self.task.record.answer
        return json.loads(answer) if isinstance(answer, str) else answer or []

    def new_progress(self) -> CellProgress:
        sorted_by = self.task.record.init_config.get("sorted_by")
        return CellProgress(self.backend.sheets, self.goal_sheet(), self.target(), sorted_by)

    def judge(self, answer: Any) -> bool:
        """Finished with the goal's sheet equal to the target."""
        return self.progress.current() == self.target()
