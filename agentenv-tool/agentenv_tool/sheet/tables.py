"""The workbooks Sheet tasks start from: product inventories and class score tables, built from a spec.

A spec (kept in a task's ``init_config``) lists the sheets' tables, each ``{"kind", "seed"}`` and optionally
``"blank_row"`` / ``"blank_col"`` (an empty row or column inserted there) and ``"notes"`` (A1 -> note text).
"""

from __future__ import annotations

import random
from typing import Any

from openpyxl import Workbook
from openpyxl.comments import Comment

PRODUCTS = {
    "beef": "Meat", "pork": "Meat", "chicken": "Meat", "lamb": "Meat", "duck": "Meat", "fish": "Seafood",
    "shrimp": "Seafood", "salmon": "Seafood", "crab": "Seafood", "apple": "Fruits", "banana": "Fruits",
    "orange": "Fruits", "mango": "Fruits", "grape": "Fruits", "carrot": "Vegetables", "potato": "Vegetables",
    "tomato": "Vegetables", "onion": "Vegetables", "rice": "Grains", "oats": "Grains",
}
PRODUCT_COLUMNS = ("Product", "Category", "Price", "Quantity", "Discount", "Location", "Product Rating")
PRODUCT_FORMATS = ("General", "General", "0.00", "0", "0.00", "General", "0.0")
STUDENTS = ("Alice Bob Catherine David Eva Frank Grace Hugo Ivy Jack Katie Leo Mandy Nelson Olivia Peter Quinn "
            "Rosa Sam Tina").split()
SUBJECTS = ("Math", "English", "Physics", "Chemistry", "Biology")
SCORE_COLUMNS = ("Name", "Class", *SUBJECTS)


def product_rows(rng: random.Random) -> list[list[Any]]:
    names = rng.sample(sorted(PRODUCTS), rng.randint(9, 13))
    return [[n, PRODUCTS[n], round(rng.uniform(0.3, 15), 2), rng.randint(3, 200), rng.choice((0, 0.05, 0.08, 0.1,
             0.12, 0.15, 0.2)), f"Store {rng.choice('ABCD')}", round(rng.uniform(3.5, 5.0), 1)] for n in names]


def new_product(rng: random.Random, taken: set[str]) -> list[Any]:
    name = rng.choice(sorted(set(PRODUCTS) - taken))
    return [name, PRODUCTS[name], round(rng.uniform(0.3, 15), 2), rng.randint(3, 200), 0.05,
            f"Store {rng.choice('ABCD')}", round(rng.uniform(3.5, 5.0), 1)]


def score_rows(rng: random.Random) -> list[list[Any]]:
    names = rng.sample(STUDENTS, rng.randint(8, 12))
    return [[n, rng.randint(1, 3), *(rng.randint(55, 100) for _ in SUBJECTS)] for n in names]


def table(spec: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...], list[list[Any]]]:
    """(header, number formats, rows) of a table spec."""
    rng = random.Random(spec["seed"])
    if spec["kind"] == "products":
        return PRODUCT_COLUMNS, PRODUCT_FORMATS, product_rows(rng)
    return SCORE_COLUMNS, ("General",) * len(SCORE_COLUMNS), score_rows(rng)


def build_workbook(specs: list[dict[str, Any]]) -> Workbook:
    """A workbook with one sheet per spec, named Sheet1, Sheet2, ..."""
    workbook = Workbook()
    workbook.remove(workbook.active)
    for number, spec in enumerate(specs, 1):
        ws = workbook.create_sheet(f"Sheet{number}")
        header, formats, rows = table(spec)
        for r, line in enumerate([list(header), *rows], 1):
            for c, value in enumerate(line, 1):
                cell = ws.cell(r, c, value)
                if r > 1:
                    cell.number_format = formats[c - 1]
        if spec.get("blank_col"):
            ws.insert_cols(spec["blank_col"])
        if spec.get("blank_row"):
            ws.insert_rows(spec["blank_row"])
        for position, text in spec.get("notes", {}).items():
            ws[position].comment = Comment(text, "teacher")
    return workbook
