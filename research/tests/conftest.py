"""Research scripts are not packages: their folder (and examples/, whose demo they repeat) go on the path.
Run these with ``.venv/bin/python -m pytest research/tests`` (the product suite does not collect them)."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "research"), str(ROOT / "examples")]
