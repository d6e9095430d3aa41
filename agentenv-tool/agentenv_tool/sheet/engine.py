"""A spreadsheet engine over an ``openpyxl`` workbook, answering as Google Sheets (through gspread) does.

Values are shown as Sheets displays them: numbers through their cell's number format (``0.00`` -> "0.40",
General -> "444" or "88.8"), formulas by their value, a merged range repeating its top-left value.  Formulas
are the tool set's: ``=OP(A1:B3)`` or ``=OP(A1,B2,...)`` with OP one of :data:`OPERATORS`; inserting, deleting
and sorting rows or columns moves the references in them as Sheets does.  The sheet is bounded
(:data:`MAX_ROWS` x :data:`MAX_COLS`) so that no request can make it huge.
"""

from __future__ import annotations

import math
import re
from typing import Any

from openpyxl import Workbook
from openpyxl.cell.cell import MergedCell
from openpyxl.comments import Comment
from openpyxl.utils import get_column_letter
from openpyxl.utils.cell import column_index_from_string

OPERATORS = ("SUM", "AVERAGE", "COUNT", "MAX", "MIN", "MINUS", "PRODUCT")
MAX_ROWS, MAX_COLS = 500, 52
#: a formula names at most this many cells, and a workbook holds at most this many formulas: so that showing
#: a sheet (every formula worked out once) stays within milliseconds, whatever a model writes
MAX_FORMULA_CELLS, MAX_FORMULAS = 1000, 100
_A1 = re.compile(r"^([A-Z]{1,3})([1-9][0-9]{0,5})$")
_REF = re.compile(r"(?<![A-Z])([A-Z]{1,3})([1-9][0-9]{0,5})(?![0-9(])")
_FORMULA = re.compile(r"^=\s*([A-Z]+)\((.*)\)\s*$")


class SheetError(ValueError):
    """A request the sheet refuses; the message says why and what is valid."""


def parse_a1(position: str) -> tuple[int, int]:
    """``"C4"`` -> ``(4, 3)`` (row, column), within the sheet's bounds."""
    match = _A1.match(str(position).strip().upper())
    if match is None:
        raise SheetError(f"{str(position)[:20]!r} is not a cell position in A1 notation (a column letter and a row "
                         "number, e.g. 'B3'); get_A1_annotation(row, col) gives a cell's A1 notation.")
    row, col = int(match.group(2)), column_index_from_string(match.group(1))
    check_bounds(row, col)
    return row, col


def check_bounds(row: int, col: int) -> None:
    if not (1 <= row <= MAX_ROWS and 1 <= col <= MAX_COLS):
        raise SheetError(f"the sheet has at most {MAX_ROWS} rows and {MAX_COLS} columns (A1 to "
                         f"{get_column_letter(MAX_COLS)}{MAX_ROWS}).")


def a1(row: int, col: int) -> str:
    return f"{get_column_letter(col)}{row}"


def number(value: Any) -> float | None:
    """A cell value as a number, if it is one (numeric text counts, as the tool set converts it)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            parsed = float(value.strip())
        except ValueError:
            return None
        return parsed if math.isfinite(parsed) else None
    return None


def shown_number(value: float, number_format: str) -> str:
    """A number as Sheets displays it in a cell of ``number_format``."""
    decimals = re.fullmatch(r"0(?:\.(0+))?", number_format or "")
    if decimals:
        return f"{value:.{len(decimals.group(1) or '')}f}"
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.10g}"


class Spreadsheet:
    """One workbook and the sheet open in it."""

    def __init__(self, workbook: Workbook) -> None:
        self.workbook = workbook
        self.sheet = None

    # --- sheets ---------------------------------------------------------------------------------------
    def open(self, name: str):
        if name not in self.workbook.sheetnames:
            raise SheetError(f"there is no sheet {name[:40]!r}; the sheets are {self.workbook.sheetnames}.")
        self.sheet = self.workbook[name]
        return self.sheet

    def delete(self, name: str) -> None:
        if name not in self.workbook.sheetnames:
            raise SheetError(f"there is no sheet {name[:40]!r}; the sheets are {self.workbook.sheetnames}.")
        if len(self.workbook.sheetnames) == 1:
            raise SheetError("a workbook keeps at least one sheet.")
        if self.sheet is not None and self.sheet.title == name:
            self.sheet = None
        del self.workbook[name]

    def ws(self):
        if self.sheet is None:
            raise SheetError("Please open a sheet before operating it (open_sheet).")
        return self.sheet

    # --- reading --------------------------------------------------------------------------------------
    def extent(self, ws=None) -> tuple[int, int]:
        """(rows, columns) up to the last cell showing something."""
        ws = ws or self.ws()
        rows = cols = 0
        for (row, col), cell in ws._cells.items():  # the cells written so far (openpyxl keeps them by position)
            if cell.value is not None and cell.value != "":
                rows, cols = max(rows, row), max(cols, col)
        for merged in ws.merged_cells.ranges:
            if ws.cell(merged.min_row, merged.min_col).value not in (None, ""):
                rows, cols = max(rows, merged.max_row), max(cols, merged.max_col)
        return rows, cols

    def shown(self, row: int, col: int, ws=None, memo: dict | None = None) -> str:
        """The displayed text of a cell (``memo``: formula values already worked out in this rendering)."""
        ws = ws or self.ws()
        for merged in ws.merged_cells.ranges:
            if (row, col) != (merged.min_row, merged.min_col) and \
                    merged.min_row <= row <= merged.max_row and merged.min_col <= col <= merged.max_col:
                row, col = merged.min_row, merged.min_col
                break
        value = self._value(ws, row, col, {} if memo is None else memo, set())
        if value is None:
            return ""
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return shown_number(float(value), ws.cell(row, col).number_format)
        return str(value)

    def values(self, ws=None, box: tuple[int, int, int, int] | None = None) -> list[list[str]]:
        """Displayed values: the whole used area, or ``box`` = (first row, first col, last row, last col)."""
        ws = ws or self.ws()
        if box is None:
            rows, cols = self.extent(ws)
            box = (1, 1, rows, cols)
        top, left, bottom, right = box
        memo: dict = {}
        return [[self.shown(r, c, ws, memo) for c in range(left, right + 1)] for r in range(top, bottom + 1)]

    # --- formulas -------------------------------------------------------------------------------------
    def evaluate(self, formula: str, ws=None) -> float | str:
        """The value of ``=OP(range or list)``, or a Sheets error text (#REF!, #NAME?, #DIV/0!, #VALUE!)."""
        return self._formula(formula, ws or self.ws(), {}, set())

    def _value(self, ws, row: int, col: int, memo: dict, stack: set) -> Any:
        """A cell's value, a formula's worked out once per rendering (``memo``); a circular one is #REF!."""
        value = ws.cell(row, col).value
        if not (isinstance(value, str) and value.startswith("=")):
            return value
        key = (ws.title, row, col)
        if key not in memo:
            if key in stack:
                return "#REF!"
            stack.add(key)
            memo[key] = self._formula(value, ws, memo, stack)
            stack.discard(key)
        return memo[key]

    def _formula(self, formula: str, ws, memo: dict, stack: set) -> float | str:
        match = _FORMULA.match(formula.strip().upper())
        if match is None or "#REF!" in formula:
            return "#REF!" if "#REF!" in formula else "#NAME?"
        operator, inside = match.groups()
        if operator not in OPERATORS:
            return "#NAME?"
        numbers: list[float] = []
        for part in (p.strip() for p in inside.split(",")):
            try:
                cells = self.cells_of(part)
            except SheetError:
                return "#NAME?"
            for r, c in cells:
                raw = self._value(ws, r, c, memo, stack)
                if raw == "#REF!":
                    return "#REF!"
                if isinstance(raw, (int, float)) and not isinstance(raw, bool):  # text is skipped, as Sheets does
                    numbers.append(float(raw))
        return _apply(operator, numbers)

    def check_formula(self, formula: str, stored: bool = True) -> None:
        """Refuse a formula naming more than :data:`MAX_FORMULA_CELLS` cells, or (``stored``) one too many."""
        match = _FORMULA.match(formula.strip().upper())
        if match is not None:
            named = sum(len(self.cells_of(p.strip())) for p in match.group(2).split(",") if p.strip())
            if named > MAX_FORMULA_CELLS:
                raise SheetError(f"a formula may name at most {MAX_FORMULA_CELLS} cells, not {named}.")
        formulas = sum(1 for ws in self.workbook.worksheets for cell in ws._cells.values()
                       if isinstance(cell.value, str) and cell.value.startswith("="))
        if stored and formulas >= MAX_FORMULAS:
            raise SheetError(f"the workbook holds at most {MAX_FORMULAS} formulas.")

    @staticmethod
    def cells_of(reference: str) -> list[tuple[int, int]]:
        """The cells ``"B2:D3"`` or ``"C4"`` names, row by row."""
        if ":" in reference:
            start, end = (parse_a1(p) for p in reference.split(":", 1))
            return [(r, c) for r in range(min(start[0], end[0]), max(start[0], end[0]) + 1)
                    for c in range(min(start[1], end[1]), max(start[1], end[1]) + 1)]
        return [parse_a1(reference)]

    # --- changing ---------------------------------------------------------------------------------------
    def set(self, row: int, col: int, value: Any) -> None:
        check_bounds(row, col)
        if isinstance(self.ws().cell(row, col), MergedCell):
            raise SheetError(f"{a1(row, col)} is inside a merged range; write to the range's top-left cell.")
        converted = number(value) if isinstance(value, str) and not value.startswith("=") else None
        if isinstance(value, str) and value.startswith("="):
            value = value.strip().upper()
            self.check_formula(value)
        self.ws().cell(row, col).value = converted if converted is not None else value

    def insert(self, dimension: str, index: int, lines: list[list[Any]]) -> None:
        """Insert ``lines`` (rows, or columns) before row/column ``index``, moving references below/right."""
        ws = self.ws()
        rows, cols = self.extent()
        count = len(lines)
        if dimension == "row":
            if not 1 <= index <= rows + 1:
                raise SheetError(f"row_idx must be between 1 and {rows + 1} (one past the last row).")
            check_bounds(rows + count, max(len(line) for line in lines))
            ws.insert_rows(index, count)
        else:
            if not 1 <= index <= cols + 1:
                raise SheetError(f"col_idx must be between 1 and {cols + 1} (one past the last column).")
            check_bounds(max(len(line) for line in lines), cols + count)
            ws.insert_cols(index, count)
        self._shift(dimension, index, count)
        for k, line in enumerate(lines):
            for j, value in enumerate(line):
                row, col = (index + k, j + 1) if dimension == "row" else (j + 1, index + k)
                self.set(row, col, value)

    def delete_lines(self, dimension: str, indices: list[int]) -> None:
        """Delete rows (or columns) ``indices`` (1-based), the highest first, moving references."""
        rows, cols = self.extent()
        last = rows if dimension == "row" else cols
        bad = [i for i in indices if not 1 <= i <= last]
        if bad:
            raise SheetError(f"{dimension} indexes must be between 1 and {last}, not {bad}.")
        if len(set(indices)) >= last:
            raise SheetError("You cannot delete the whole sheet at once.")
        ws, axis = self.ws(), 0 if dimension == "row" else 1
        for index in sorted(set(indices), reverse=True):
            # a merged range the line runs through shrinks by it, as in Sheets (openpyxl leaves it in place,
            # over the cells that move in); one that would be a single cell is no longer merged
            cut = [m for m in ws.merged_cells.ranges
                   if (m.min_row, m.min_col)[axis] <= index <= (m.max_row, m.max_col)[axis]]
            for merged in cut:
                ws.unmerge_cells(merged.coord)
            if dimension == "row":
                ws.delete_rows(index)
            else:
                ws.delete_cols(index)
            self._shift(dimension, index + 1, -1, removed=index)
            for merged in cut:
                r2, c2 = (merged.max_row - 1, merged.max_col) if axis == 0 else (merged.max_row, merged.max_col - 1)
                if r2 >= merged.min_row and c2 >= merged.min_col and (r2, c2) != (merged.min_row, merged.min_col):
                    ws.merge_cells(start_row=merged.min_row, start_column=merged.min_col, end_row=r2, end_column=c2)

    def sort(self, col: int, descending: bool) -> None:
        """Sort the rows below the header by column ``col`` (numbers before text, blanks last; stable)."""
        ws = self.ws()
        rows, cols = self.extent()
        if not 1 <= col <= cols:
            raise SheetError(f"col_num must be between 1 and {cols}.")
        body = list(range(2, rows + 1))
        if any(m.max_row >= 2 for m in ws.merged_cells.ranges):
            raise SheetError("the rows to sort hold merged cells; Sheets cannot sort them.")

        memo: dict = {}

        def key(row: int):
            text = self.shown(row, col, memo=memo)
            value = number(text)
            return (2, "") if text == "" else (0, value) if value is not None else (1, text.casefold())

        numbers = [r for r in body if key(r)[0] == 0]
        texts = [r for r in body if key(r)[0] == 1]
        blanks = [r for r in body if key(r)[0] == 2]
        ordered = sorted(numbers, key=key, reverse=descending) + sorted(texts, key=key, reverse=descending) + blanks
        snapshot = {r: [(ws.cell(r, c).value, ws.cell(r, c).number_format, ws.cell(r, c).comment)
                        for c in range(1, cols + 1)] for r in body}
        for new_row, old_row in zip(body, ordered, strict=True):
            for c, (value, fmt, comment) in enumerate(snapshot[old_row], 1):
                if isinstance(value, str) and value.startswith("="):
                    value = _move_refs(value, lambda r, k, d=new_row - old_row: (r + d, k))
                cell = ws.cell(new_row, c)
                cell.value, cell.number_format = value, fmt
                cell.comment = Comment(comment.text, comment.author) if comment else None

    def merge(self, start: str, end: str) -> None:
        (r1, c1), (r2, c2) = parse_a1(start), parse_a1(end)
        if (r1, c1) == (r2, c2) or r2 < r1 or c2 < c1:
            raise SheetError("merge a range of at least two cells, from its top-left to its bottom-right cell.")
        ws = self.ws()
        for r in range(r1, r2 + 1):  # Sheets keeps only the top-left value
            for c in range(c1, c2 + 1):
                if (r, c) != (r1, c1):
                    ws.cell(r, c).value = None
        ws.merge_cells(start_row=r1, start_column=c1, end_row=r2, end_column=c2)

    def _shift(self, dimension: str, index: int, count: int, removed: int | None = None) -> None:
        """Move references to rows/columns from ``index`` on by ``count``; references to ``removed`` break."""
        axis = 0 if dimension == "row" else 1

        def move(row: int, col: int) -> tuple[int, int] | None:
            at = (row, col)[axis]
            if removed is not None and at == removed:
                return None
            if at >= index:
                return (row + count, col) if axis == 0 else (row, col + count)
            return row, col

        for ws in self.workbook.worksheets:
            for cell in list(ws._cells.values()):
                if isinstance(cell.value, str) and cell.value.startswith("="):
                    cell.value = _move_refs(cell.value, move)
        ws = self.ws()
        for merged in list(ws.merged_cells.ranges):
            start = (merged.min_row, merged.min_col)[axis]
            if start >= index:
                merged.shift(*((0, count) if axis == 0 else (count, 0)))


def _move_refs(formula: str, move) -> str:
    def replace(match: re.Match) -> str:
        row, col = int(match.group(2)), column_index_from_string(match.group(1))
        moved = move(row, col)
        return "#REF!" if moved is None or moved[0] < 1 or moved[1] < 1 else a1(*moved)

    return _REF.sub(replace, formula)


def _apply(operator: str, numbers: list[float]) -> float | str:
    if operator == "SUM":
        return sum(numbers)
    if operator == "COUNT":
        return float(len(numbers))
    if operator == "PRODUCT":
        return math.prod(numbers) if numbers else 0.0
    if operator == "MINUS":
        return numbers[0] - numbers[1] if len(numbers) == 2 else "#VALUE!"
    if not numbers:
        return "#DIV/0!" if operator == "AVERAGE" else 0.0
    return {"AVERAGE": sum(numbers) / len(numbers), "MAX": max(numbers), "MIN": min(numbers)}[operator]
