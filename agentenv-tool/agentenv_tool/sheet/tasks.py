"""Sheet goals in the styles of AgentGym's: operations on a workbook (sorting, updating from data or notes,
formulas, inserting and deleting rows and columns, merging), with expert plans.

The plan runs on a scratch copy of the task's workbook; the target sheet's displayed values afterwards are the
gold answer (AgentGym's ``answer``: a JSON string of the 2-D list), and the reference action path is the
record's ``subgoals`` text, as in AgentGym's records.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from openpyxl.utils import get_column_letter

from ..base import PlanBuilder, Task, task_rng
from ..records import AdditionalInfo, TaskRecord
from .backend import SheetBackend
from .engine import Spreadsheet
from .tables import PRODUCT_COLUMNS, SUBJECTS, build_workbook, new_product, table


class Goal:
    """A workbook of three sheets, one of them the goal's, and the plan written on a scratch copy."""

    def __init__(self, rng: random.Random, idx: int, kind: str, extra: dict[str, Any] | None = None) -> None:
        self.rng = rng
        self.number = rng.randint(1, 3)
        self.sheet = f"Sheet{self.number}"
        self.specs = [{"kind": rng.choice(("products", "scores")), "seed": f"sheet:{idx}:{n}"} for n in range(1, 4)]
        self.specs[self.number - 1] = {"kind": kind, "seed": f"sheet:{idx}:{self.number}", **(extra or {})}
        self.header, _formats, self.rows = table(self.specs[self.number - 1])
        self.sheets = Spreadsheet(build_workbook(self.specs))
        self.plan = PlanBuilder(SheetBackend(self.sheets))
        self.plan.call(f'The goal is about "{self.sheet}", so I open it first.', "open_sheet", name=self.sheet)

    def column(self, name: str) -> int:
        return self.header.index(name) + 1


def sort_by(g: Goal):
    column = g.rng.choice(g.header[2:])
    order = g.rng.choice(("asc", "des"))
    words = "ascending" if order == "asc" else "descending"
    g.plan.call(f'"{column}" is column {g.column(column)}; I sort the rows by it in {words} order.',
                "sort_sheet_by_col", col_num=g.column(column), order=order)
    return f'In "{g.sheet}", sort the table by "{column}" in {words} order.', "easy"


def sales_update(g: Goal):
    sold = [[row[0], min(row[3], g.rng.randint(0, 30))] for row in g.rows]
    data = [["Product", "Today Sold"]] + [[name, str(n)] for name, n in sold]
    left = [[row[3] - n] for row, (_, n) in zip(g.rows, sold, strict=True)]
    end = len(g.rows) + 1
    g.plan.call(f"Each quantity drops by what was sold today; the new quantities of rows 2 to {end} are {left}. "
                f"I write them into D2:D{end}.", "update_range", start_position="D2", end_position=f"D{end}",
                values_list=left)
    g.plan.call('Now I sort by "Quantity" (column 4) in descending order.', "sort_sheet_by_col", col_num=4,
                order="des")
    return (f'Product Update: the table in "{g.sheet}" holds the product inventory, and {data} is today\'s sales '
            f'data. Please update the quantities in "{g.sheet}" and then sort by "Quantity" in descending order.',
            "medium")


def column_totals(g: Goal):
    total = len(g.rows) + 2
    g.plan.call(f"The table's rows end at {total - 1}; I label row {total} 'Total'.", "update_cell",
                position=f"A{total}", value="Total")
    for subject in SUBJECTS:
        letter = get_column_letter(g.column(subject))
        g.plan.call(f"The sum of {subject} (column {letter}) goes into {letter}{total}.", "update_cell_by_formula",
                    operator="SUM", start_position=f"{letter}2", end_position=f"{letter}{total - 1}",
                    result_position=f"{letter}{total}")
    return (f'In "{g.sheet}", add a row at the bottom of the table whose first cell is "Total" and which holds the '
            "sum of each subject's scores (use formulas).", "hard")


def delete_category(g: Goal):
    categories = sorted({row[1] for row in g.rows})
    category = g.rng.choice(categories)
    if len(categories) < 2:
        return None
    cells = g.plan.call(f'I find the rows whose Category (column 2) is exactly "{category}".', "filter_cells",
                        query=f"^{category}$", in_column=2)
    rows = [int(cell[1:]) for cell in cells]
    g.plan.call(f"Those are rows {rows}; I delete them.", "delete_batch_data", dimension="row", index_list=rows)
    return f'In "{g.sheet}", delete the products of the category "{category}" from the table.', "medium"


def lowest_rated_discount(g: Goal):
    ratings = sorted(float(row[g.column("Product Rating") - 1]) for row in g.rows)
    if len(ratings) > 3 and ratings[2] == ratings[3]:
        return None  # "the three lowest rated" would not name three products
    g.plan.call('I sort by "Product Rating" (column 7) in descending order, so the lowest rated come last.',
                "sort_sheet_by_col", col_num=7, order="des")
    end = len(g.rows) + 1
    current = g.plan.call(f"I read the discounts of the last three rows, E{end - 2}:E{end}.", "get_range_values",
                          start_position=f"E{end - 2}", end_position=f"E{end}")
    raised = [[round(float(row[0]) + 0.05, 2)] for row in current]
    g.plan.call(f"The discounts {current} rise by 0.05 to {raised}.", "update_range",
                start_position=f"E{end - 2}", end_position=f"E{end}", values_list=raised)
    return (f'Product Promotion: "{g.sheet}" holds the product inventory. Please sort the products in descending order '
            "by product rating, and then increase the discount rate of the three products with the lowest ratings "
            "by 5 percentage points.", "medium")


def add_product(g: Goal):
    row = new_product(g.rng, {r[0] for r in g.rows})
    end = len(g.rows) + 2
    g.plan.call(f"The table ends at row {end - 1}; I insert the new product as row {end}.", "insert_rows",
                values_list=[row], row_idx=end)
    return (f'A new product arrived: {[str(v) for v in row]} (in the columns {list(PRODUCT_COLUMNS)}). Add it as the '
            f'last row of the table in "{g.sheet}".', "easy")


def remove_gaps(g: Goal):
    blank_row, blank_col = g.specs[g.number - 1]["blank_row"], g.specs[g.number - 1]["blank_col"]
    g.plan.call("I look at the whole sheet to find the empty row and column.", "get_all_values")
    g.plan.call(f"Row {blank_row} is empty; I delete it.", "delete_batch_data", dimension="row",
                index_list=[blank_row])
    g.plan.call(f"Column {blank_col} is empty; I delete it.", "delete_batch_data", dimension="col",
                index_list=[blank_col])
    g.plan.call("Now the first two titles are A1 and B1; I merge them.", "merge_cells", start_position="A1",
                end_position="B1")
    return (f'In "{g.sheet}", delete the empty rows and columns, then merge the titles of the first and second '
            "column into a single cell.", "hard")


def notes_update(g: Goal):
    noted = g.specs[g.number - 1]["noted"]
    names = [g.rows[i][0] for i in noted]
    cells = g.plan.call(f"The notes are on the cells of {names}; I find those cells.", "filter_cells",
                        query="^(" + "|".join(names) + ")$", in_column=1)
    for cell in cells:
        note = g.plan.call(f"I read the note on {cell}.", "get_note", position=cell)
        subject, score = note.removeprefix("Corrected score: ").split(" = ")
        letter = get_column_letter(g.column(subject))
        g.plan.call(f"The note says the {subject} score is {score}; {subject} is column {letter}.", "update_cell",
                    position=f"{letter}{cell[1:]}", value=score)
    g.plan.call('Finally I sort by "Math" (column 3) in descending order.', "sort_sheet_by_col", col_num=3,
                order="des")
    return (f'In "{g.sheet}", please update the scores according to the notes on the cells of '
            f'{" and ".join(repr(n) for n in names)}, and then sort the table in descending order by Math.', "hard")


def rank_column(g: Goal):
    subject = g.rng.choice(SUBJECTS)
    col = g.column(subject)
    scores = [row[col - 1] for row in g.rows]
    if len(set(scores)) < len(scores):
        return None  # tied scores share a rank: "1, 2, 3, ..." would not be the only right column
    g.plan.call(f'I sort by "{subject}" (column {col}) in descending order, so row order is rank order.',
                "sort_sheet_by_col", col_num=col, order="des")
    ranks = [f"{subject}_Rank", *range(1, len(g.rows) + 1)]
    g.plan.call(f"I insert the rank column right after {subject}, as column {col + 1}.", "insert_cols",
                values_list=[ranks], col_idx=col + 1)
    return (f'In "{g.sheet}", rank the table by {subject} score and insert the column "{subject}_Rank" right after '
            f'the column "{subject}", filling in the rank of each student\'s {subject} score (starting from 1).',
            "medium")


def average_price(g: Goal):
    letter = get_column_letter(len(PRODUCT_COLUMNS) + 2)
    end = len(g.rows) + 1
    g.plan.call(f"I label {letter}1 'Average Price'.", "update_cell", position=f"{letter}1", value="Average Price")
    g.plan.call(f"The prices are C2:C{end}; their average goes into {letter}2 by formula.", "update_cell_by_formula",
                operator="AVERAGE", start_position="C2", end_position=f"C{end}", result_position=f"{letter}2")
    return (f'In "{g.sheet}", write the label "Average Price" in cell {letter}1 and the average price of all products '
            f"into cell {letter}2 with a formula.", "easy")


#: kind -> (goal writer, table kind)
KINDS: dict[str, tuple[Callable, str]] = {
    "sort_by": (sort_by, "any"), "sales_update": (sales_update, "products"),
    "column_totals": (column_totals, "scores"), "delete_category": (delete_category, "products"),
    "lowest_rated_discount": (lowest_rated_discount, "products"), "add_product": (add_product, "products"),
    "remove_gaps": (remove_gaps, "any"), "notes_update": (notes_update, "scores"),
    "rank_column": (rank_column, "scores"), "average_price": (average_price, "products"),
}


def _extra(kind: str, rng: random.Random, idx: int) -> dict[str, Any]:
    """What the goal's sheet needs besides its table: gaps to remove, notes to follow."""
    if kind == "remove_gaps":
        return {"blank_row": rng.randint(3, 8), "blank_col": rng.randint(3, 6)}
    if kind == "notes_update":  # notes on two students' name cells, each correcting one score
        seed = f"sheet:{idx}:notes"
        noted = sorted(rng.sample(range(len(table({"kind": "scores", "seed": seed})[2])), 2))
        notes = {f"A{i + 2}": f"Corrected score: {rng.choice(SUBJECTS)} = {rng.randint(40, 100)}" for i in noted}
        return {"seed": seed, "noted": noted, "notes": notes}
    return {}


def _sorted_by(plan) -> int | None:
    """The column the target's rows were last sorted by (None: not sorted). Rows equal in it may stand in any
    order: an agent that sorted by another column first keeps another order of them, as right as the plan's.
    (No goal inserts or deletes a column at or before it after sorting.)"""
    sorts = [step.arguments["col_num"] for step in plan if step.tool == "sort_sheet_by_col"]
    return sorts[-1] if sorts else None


@lru_cache(maxsize=1024)
def sheet_task(idx: int) -> Task:
    """Generated Sheet task ``idx``."""
    rng = task_rng("sheet", idx)
    while True:
        kind = rng.choice(sorted(KINDS))
        writer, table_kind = KINDS[kind]
        if table_kind == "any":
            table_kind = rng.choice(("products", "scores"))
        extra = _extra(kind, rng, idx)
        goal = Goal(rng, idx, table_kind, extra)
        written = writer(goal)
        if written is not None:
            break
    text, difficulty = written
    plan, _ = goal.plan.finish("The sheet is now as the goal asks; I finish.", None, arguments={})
    target = goal.sheets.values(goal.sheets.workbook[goal.sheet])
    path = "".join(f"Action {n}: {step.action}\n" for n, step in enumerate(plan[:-1], 1))
    record = TaskRecord(
        id=idx, goal=text, subgoals=f"Reference Action Path: \n{path}", difficulty=difficulty, task="tool-operation",
        additional_info=AdditionalInfo(answer=json.dumps(target, ensure_ascii=False), goal_type=1, tool="sheet",
                                       init_config={"sheet": goal.sheet, "workbook": goal.specs,
                                                    "sorted_by": _sorted_by(plan)}),
    )
    return Task(record, plan, kind)
