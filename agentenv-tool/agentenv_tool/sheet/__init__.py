"""Sheet: a spreadsheet engine over openpyxl workbooks."""
