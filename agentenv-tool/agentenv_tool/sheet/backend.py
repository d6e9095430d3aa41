"""The sheet tools: AgentGym's (gspread's) names, arguments and answers over the local spreadsheet engine.

Tools that change the sheet answer the whole sheet as a 2-D list of displayed strings, as AgentGym's do.
``filter_cells`` runs the model's regular expression with the ``regex`` package's timeout, so a pattern that
backtracks without end is refused instead of stalling the server.
"""

from __future__ import annotations

import time
from functools import wraps
from typing import Annotated, Any, Literal

import regex
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
from openpyxl.comments import Comment
from openpyxl.utils import get_column_letter
from pydantic import AfterValidator, Field, StrictFloat, StrictInt, StrictStr

from ..base import ToolBackend
from ..tools import ToolError, tool
from .engine import MAX_COLS, MAX_ROWS, OPERATORS, SheetError, Spreadsheet, a1, check_bounds, parse_a1

Position = Annotated[str, Field(max_length=12, description="A1 notation, e.g. 'B3'")]
Operator = Literal["SUM", "AVERAGE", "COUNT", "MAX", "MIN", "MINUS", "PRODUCT"]


def _storable(text: str) -> str:
    """Refuse what a worksheet cell cannot hold (openpyxl raises on control characters, halfway through an
    operation that already changed the sheet)."""
    if ILLEGAL_CHARACTERS_RE.search(text):
        raise ValueError("a cell cannot hold control characters")
    return text


Value = Annotated[StrictStr, AfterValidator(_storable)] | StrictInt | StrictFloat | None
Lines = Annotated[list[list[Value]], Field(max_length=MAX_ROWS, description="a list of lists")]
Index = Annotated[int, Field(ge=1, le=max(MAX_ROWS, MAX_COLS))]
#: how long (wall clock) a filter_cells pattern may run over the whole sheet: a plain pattern takes well under a
#: millisecond, and the budget is wide enough that a busy machine never cuts one short (0.2 s did, under 32
#: threads at a load average of 20)
REGEX_TIMEOUT_S = 2.0


def refusals(method):
    """A tool whose sheet errors are the observation (and openpyxl's own refusals too)."""

    @wraps(method)
    def run(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except SheetError as exc:
            raise ToolError(f"Error: {exc}") from None
        except (ValueError, TypeError, AttributeError, KeyError, IndexError) as exc:  # openpyxl's checks
            raise ToolError(f"Error: the sheet refused the operation ({type(exc).__name__}: {exc}).") from None

    return run


class SheetBackend(ToolBackend):
    """A workbook of one episode; most tools need a sheet opened first."""

    def __init__(self, sheets: Spreadsheet) -> None:
        self.sheets = sheets

    def _all(self) -> list[list[str]]:
        return self.sheets.values()

    @tool("Open a sheet by name.", "the opened worksheet.")
    @refusals
    def open_sheet(self, name: Annotated[str, Field(max_length=100)]) -> str:
        ws = self.sheets.open(name)
        return f"<Worksheet {ws.title!r} id:{self.sheets.workbook.sheetnames.index(ws.title)}>"

    @tool("Delete the specified sheet.", "whether it worked.")
    @refusals
    def del_sheet(self, name: Annotated[str, Field(max_length=100)]) -> str:
        self.sheets.delete(name)
        return f"You have deleted sheet {name} successfully"

    @tool("Freeze rows or columns of the sheet.", "whether it worked.")
    @refusals
    def freeze_data(self, dimension: Literal["rows", "columns"], num: Annotated[int, Field(ge=0, le=MAX_COLS)]):
        ws = self.sheets.ws()
        ws.freeze_panes = f"A{num + 1}" if dimension == "rows" else f"{get_column_letter(num + 1)}1"
        return f"You have successfully frozen {num} {dimension}"

    @tool("Translate a cell position (row, col) into A1 notation.", "the A1 notation.")
    @refusals
    def get_A1_annotation(self, row: Index, col: Index) -> str:  # noqa: N802 - AgentGym's tool name
        check_bounds(row, col)
        return a1(row, col)

    @tool("Insert columns before column col_idx; values_list holds one list per column.", "the sheet's values.")
    @refusals
    def insert_cols(self, values_list: Lines, col_idx: Index) -> list[list[str]]:
        self._nonempty(values_list)
        self.sheets.insert("col", col_idx, values_list)
        return self._all()

    @tool("Insert rows before row row_idx; values_list holds one list per row.", "the sheet's values.")
    @refusals
    def insert_rows(self, values_list: Lines, row_idx: Index) -> list[list[str]]:
        self._nonempty(values_list)
        self.sheets.insert("row", row_idx, values_list)
        return self._all()

    @tool("Delete rows or columns by their indexes (1-based).", "the sheet's values.")
    @refusals
    def delete_batch_data(self, dimension: Literal["row", "col"],
                          index_list: Annotated[list[Index], Field(min_length=1, max_length=MAX_ROWS)]):
        self.sheets.ws()
        self.sheets.delete_lines(dimension, index_list)
        return self._all()

    @tool("Update the value of a cell.", "the sheet's values.")
    @refusals
    def update_cell(self, position: Position, value: Value) -> list[list[str]]:
        self.sheets.ws()
        self.sheets.set(*parse_a1(position), value)
        return self._all()

    @tool("Write into result_position a formula applying operator to some cells: give start_position and "
          "end_position (a range) or position_list.", "the sheet's values.")
    @refusals
    def update_cell_by_formula(self, operator: Operator, result_position: Position,
                               start_position: Position | None = None, end_position: Position | None = None,
                               position_list: Annotated[list[Position], Field(max_length=200)] | None = None):
        self.sheets.ws()
        self.sheets.set(*parse_a1(result_position), self._formula(operator, start_position, end_position,
                                                                  position_list))
        return self._all()

    @tool("Update a range of cells from a list of rows (its shape must match the range).", "the sheet's values.")
    @refusals
    def update_range(self, start_position: Position, end_position: Position, values_list: Lines):
        self.sheets.ws()
        (r1, c1), (r2, c2) = parse_a1(start_position), parse_a1(end_position)
        if r2 < r1 or c2 < c1:
            raise SheetError("start_position must be the range's top-left cell and end_position its bottom-right.")
        shape = (r2 - r1 + 1, c2 - c1 + 1)
        if len(values_list) != shape[0] or any(len(row) != shape[1] for row in values_list):
            raise SheetError(f"values_list must have {shape[0]} row(s) of {shape[1]} value(s) for "
                             f"{start_position}:{end_position}.")
        for i, row in enumerate(values_list):
            for j, value in enumerate(row):
                self.sheets.set(r1 + i, c1 + j, value)
        return self._all()

    @tool("Sort the sheet's rows below the header by a column.", "the sheet's values.")
    @refusals
    def sort_sheet_by_col(self, col_num: Index, order: Literal["asc", "des"]) -> list[list[str]]:
        self.sheets.ws()
        self.sheets.sort(col_num, order == "des")
        return self._all()

    @tool("Merge the cells of a range (top-left to bottom-right).", "the sheet's values.")
    @refusals
    def merge_cells(self, start_position: Position, end_position: Position) -> list[list[str]]:
        self.sheets.ws()
        self.sheets.merge(start_position, end_position)
        return self._all()

    @tool("Write a note on a cell.", "the cell's note.")
    @refusals
    def update_note(self, position: Position,
                    content: Annotated[str, Field(max_length=2000), AfterValidator(_storable)]) -> str:
        row, col = parse_a1(position)
        self.sheets.ws().cell(row, col).comment = Comment(content, "agent")
        return f"Updated! the {position}'s note is {content}"

    @tool("Display all cell values of the current sheet.", "a 2-D list of strings.")
    @refusals
    def get_all_values(self) -> list[list[str]]:
        return self._all()

    @tool("Get the values of a range.", "a 2-D list of strings.")
    @refusals
    def get_range_values(self, start_position: Position, end_position: Position) -> list[list[str]]:
        (r1, c1), (r2, c2) = parse_a1(start_position), parse_a1(end_position)
        return self.sheets.values(box=(min(r1, r2), min(c1, c2), max(r1, r2), max(c1, c2)))

    @tool("Get the value of a cell.", "the displayed value.")
    @refusals
    def get_cell_value(self, position: Position) -> str:
        return self.sheets.shown(*parse_a1(position))

    @tool("Calculate a value applying operator to some cells: give start_position and end_position (a range) or "
          "position_list.", "the displayed result.")
    @refusals
    def get_value_by_formula(self, operator: Operator, start_position: Position | None = None,
                             end_position: Position | None = None,
                             position_list: Annotated[list[Position], Field(max_length=200)] | None = None) -> str:
        formula = self._formula(operator, start_position, end_position, position_list)
        self.sheets.check_formula(formula, stored=False)
        value = self.sheets.evaluate(formula)
        return value if isinstance(value, str) else self._plain(value)

    @tool("Find the cells whose value matches query (a regular expression, searched in each cell), in one row or "
          "column if given.", "the matching cells' A1 positions.")
    @refusals
    def filter_cells(self, query: Annotated[str, Field(max_length=200)], in_row: Index | None = None,
                     in_column: Index | None = None) -> list[str]:
        try:
            pattern = regex.compile(query)
        except regex.error as exc:
            raise SheetError(f"query is not a valid regular expression ({exc}).") from None
        found, deadline = [], time.monotonic() + REGEX_TIMEOUT_S
        for r, line in enumerate(self._all(), 1):
            for c, text in enumerate(line, 1):
                if (in_row is None or r == in_row) and (in_column is None or c == in_column) and text:
                    try:
                        hit = pattern.search(text, timeout=max(deadline - time.monotonic(), 1e-3))
                    except TimeoutError:
                        raise SheetError("query takes too long to match; use a simpler pattern.") from None
                    if hit:
                        found.append(a1(r, c))
        return found

    @tool("Get the note of a cell ('' when it has none).", "the note.")
    @refusals
    def get_note(self, position: Position) -> str:
        comment = self.sheets.ws().cell(*parse_a1(position)).comment
        return comment.text if comment else ""

    @tool("Finish the task when the sheet is as the goal asks.", "the open sheet's values.")
    @refusals
    def finish(self) -> list[list[str]] | str:
        # finish always ends the episode (it is judged on the goal's sheet), with no sheet open too
        return self._all() if self.sheets.sheet is not None else "Finished with no sheet open."

    # --- helpers ----------------------------------------------------------------------------------------
    @staticmethod
    def _formula(operator: str, start: str | None, end: str | None, positions: list[str] | None) -> str:
        if operator not in OPERATORS:
            raise SheetError(f"the operator should be one of {list(OPERATORS)}.")
        if positions:
            for p in positions:
                parse_a1(p)
            return f"={operator}({','.join(p.strip().upper() for p in positions)})"
        if start is None or end is None:
            raise SheetError("give start_position and end_position (a range), or position_list.")
        parse_a1(start), parse_a1(end)
        return f"={operator}({start.strip().upper()}:{end.strip().upper()})"

    @staticmethod
    def _nonempty(lines: list[list[Any]]) -> None:
        if not lines or not any(lines):
            raise SheetError("values_list must be a non-empty 2-D list, e.g. [[\"a\", 1]].")

    @staticmethod
    def _plain(value: float) -> str:
        return str(int(value)) if float(value).is_integer() else f"{value:.10g}"
