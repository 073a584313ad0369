"""The check that a document's claims table is a run's, row for row (``claims.compare``)."""

from __future__ import annotations

from pathlib import Path

from strategic_apple_tasting.experiments.claims.compare import HEADER, differences, main

ROWS = ["| a \\| b | paper's statement: `x` | 1 | 2 | ≤ 3 | yes |",
        "| c | measured: `y` | 4 | 5 | ≥ 6 | **no**: why |"]


def _table(*rows: str) -> str:
    return "\n".join(["Some words.", "", HEADER, "|---|---|---|---|---|---|", *rows, "",
                      "More words."])


def test_the_same_table_agrees_and_each_difference_is_named():
    assert differences(_table(*ROWS), _table(*ROWS)) == []
    changed = ROWS[1].replace("**no**: why", "yes")
    assert differences(_table(*ROWS), _table(ROWS[0], changed)) == ["c: verdict differs"]
    assert differences(_table(*ROWS), _table(ROWS[0])) == ["only in the document: c"]
    assert differences(_table(ROWS[0]), _table(*ROWS)) == ["only in the run: c"]
    assert differences(_table(*ROWS), _table(*ROWS[::-1])) == ["the rows are in another order"]


def test_the_command_says_whether_the_documents_table_is_a_runs(tmp_path, capsys):
    readme = Path(__file__).parents[2] / "docs" / "reproducing.md"
    same = tmp_path / "claims.md"
    same.write_text(readme.read_text())
    assert main([str(readme), str(same)]) == 0
    assert "row for row" in capsys.readouterr().out
    text = readme.read_text()
    start = text.index(HEADER)
    row = text.index("\n|", text.index("\n", start) + 1) + 1  # the first row
    end = text.index("\n", row)
    (tmp_path / "other.md").write_text(text[:row] + text[end + 1:])  # the control: one fewer
    assert main([str(readme), str(tmp_path / "other.md")]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("only in the document: ") and out[-1].endswith("1 difference(s)")
    assert main([str(readme), str(tmp_path / "missing.md")]) == 2


def test_verdicts_that_differ_are_named_and_a_reason_alone_is_not_a_difference(tmp_path,
                                                                             capsys):
    from strategic_apple_tasting.experiments.claims.compare import verdict_differences

    quick = [ROWS[0].replace("| yes |", "| not discriminating at this T: small T |"),
             ROWS[1].replace("**no**: why", "**no**: another reason")]
    assert verdict_differences(_table(*ROWS), _table(*quick)) == [
        ("a \\| b", "yes", "not discriminating at this T")]
    assert verdict_differences(_table(*ROWS), _table(*ROWS)) == []  # the control: none
    assert verdict_differences(_table(*ROWS), _table(ROWS[1])) == []  # a row only in one
    (tmp_path / "full.md").write_text(_table(*ROWS))
    (tmp_path / "quick.md").write_text(_table(*quick))
    assert main(["--verdicts", str(tmp_path / "full.md"), str(tmp_path / "quick.md")]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "a \\| b: yes (full), not discriminating at this T (quick)",
        "the verdicts differ in 1 of the 2 rows both tables have"]
