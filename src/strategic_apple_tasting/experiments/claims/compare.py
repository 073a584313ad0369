"""Whether a document's claims table is a run's, row for row; where two runs' verdicts differ.

``python -m strategic_apple_tasting.experiments.claims.compare docs/reproducing.md
reproduce/claims.md`` prints each difference (a row only in one table, a cell that differs)
and exits 1, or says the tables agree and exits 0. With ``--verdicts FULL QUICK`` it prints
each row both tables have whose verdict differs (the full run's, then the quick run's) and
their count, and exits 0. The first table headed like ``claims.md``'s is read in each.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HEADER = "| claim | source | measured | control | theory | verdict |"
COLUMNS = ("claim", "source", "measured", "control", "theory", "verdict")
_BAR = re.compile(r"(?<!\\)\|")  # a cell's own bars are escaped (rows._md)


def table_rows(text: str) -> dict[str, tuple[str, ...]]:
    """The first claims table in ``text``: claim → its cells, in order; ``ValueError`` if
    there is none or a claim is there twice."""
    lines = text.splitlines()
    try:
        start = next(k for k, line in enumerate(lines) if line.strip() == HEADER)
    except StopIteration:
        raise ValueError(f"no claims table (a line {HEADER!r})") from None
    rows: dict[str, tuple[str, ...]] = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = tuple(c.strip() for c in _BAR.split(line.strip())[1:-1])
        if cells[0] in rows:
            raise ValueError(f"claim {cells[0]!r} is in the table twice")
        rows[cells[0]] = cells
    return rows


def differences(expected: str, run: str) -> list[str]:
    """How the claims table of ``expected`` (a document's) differs from ``run``'s (a
    ``claims.md``): one line each, empty when they agree row for row and in order."""
    want, got = table_rows(expected), table_rows(run)
    out = [f"only in the document: {claim}" for claim in want if claim not in got]
    out += [f"only in the run: {claim}" for claim in got if claim not in want]
    for claim, cells in want.items():
        if claim in got and got[claim] != cells:
            column = next((name for name, a, b in zip(COLUMNS, cells, got[claim], strict=False)
                           if a != b), "the number of cells")
            out.append(f"{claim}: {column} differs")
    if not out and list(want) != list(got):
        out.append("the rows are in another order")
    return out


def verdict(cell: str) -> str:
    """A verdict cell's verdict, without its reason: ``**no**: why`` → ``no``."""
    return cell.split(":", 1)[0].replace("**", "").strip()


def verdict_differences(full: str, quick: str) -> list[tuple[str, str, str]]:
    """(claim, the full table's verdict, the quick table's) for each row both tables have
    whose verdicts differ, in the full table's order (a reason alone does not count)."""
    big, small = table_rows(full), table_rows(quick)
    return [(claim, verdict(cells[-1]), verdict(small[claim][-1]))
            for claim, cells in big.items()
            if claim in small and verdict(cells[-1]) != verdict(small[claim][-1])]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    verdicts = args[:1] == ["--verdicts"]
    paths = args[1:] if verdicts else args
    if len(paths) != 2:
        print("usage: python -m strategic_apple_tasting.experiments.claims.compare DOCUMENT "
              "CLAIMS_MD, or --verdicts FULL_MD QUICK_MD", file=sys.stderr)
        return 2
    try:
        texts = [Path(a).read_text(encoding="utf-8") for a in paths]
        rows = [table_rows(t) for t in texts]  # (a file without a table stops here)
    except (OSError, ValueError) as exc:
        print(f"compare: error: {exc}", file=sys.stderr)
        return 2
    if verdicts:
        found = verdict_differences(*texts)
        for claim, big, small in found:
            print(f"{claim}: {big} (full), {small} (quick)")
        print(f"the verdicts differ in {len(found)} of the {len(set(rows[0]) & set(rows[1]))} "
              f"rows both tables have")
        return 0
    found = differences(*texts)
    for line in found:
        print(line)
    if found:
        print(f"{paths[0]}'s claims table is not {paths[1]}'s: {len(found)} difference(s)")
        return 1
    print(f"{paths[0]}'s claims table is {paths[1]}'s, row for row ({len(rows[1])} rows)")
    return 0


if __name__ == "__main__":  # pragma: no cover - python -m ...compare
    sys.exit(main())
