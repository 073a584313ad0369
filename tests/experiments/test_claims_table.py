"""`sat reproduce`'s claims table, computed on tiny sweeps (the claims' values are tested at
real sizes in tests/test_claims*.py; here: that every claim is measured and reported)."""

from __future__ import annotations

from strategic_apple_tasting.cli.main import main
from strategic_apple_tasting.experiments.claims import (
    CHECKS,
    PARTS,
    check_claims,
    claims_markdown,
    claims_text,
    parts,
)
from strategic_apple_tasting.experiments.spec import check_spec
from strategic_apple_tasting.experiments.sweep import _Inline, run_sweep


def test_claims_table_on_tiny_sweeps(tmp_path):
    for name, raw in parts(2_000, [500, 1_000, 2_000], 2).items():
        run_sweep(check_spec(raw), tmp_path / name, executor=_Inline())
    rows = check_claims(tmp_path)
    assert len(rows) >= 13
    assert all(r.claim and r.measured and r.theory for r in rows)
    by_claim = {r.claim: r for r in rows}
    # Exact at any size: the shifted oracle's regret is 0, Stackelberg never exceeds strategic.
    assert by_claim["the shifted oracle has zero strategic regret"].holds
    assert by_claim["Stackelberg regret ≤ strategic regret (truthful fraction ½)"].holds
    md = claims_markdown(rows)
    assert md.count("\n") == len(rows) + 1 and "| claim |" in md
    assert len(claims_text(rows).splitlines()) == len(rows) + 2
    from strategic_apple_tasting.reports.html import write_claims_page

    page = write_claims_page(rows, {"etc": "etc/report/index.html"}, tmp_path / "index.html")
    text = page.read_text()
    assert text.count("<tr>") == len(rows) + 1 and 'href="etc/report/index.html"' in text


def test_bundled_specs_are_valid():
    for size in ("quick", "full"):
        assert set(PARTS[size]) == set(CHECKS)
        for raw in PARTS[size].values():
            assert check_spec(raw).cells


def test_reproduce_refuses_bad_flags(capsys):
    assert main(["reproduce", "--workers", "0"]) == 2
    assert "--workers must be an integer >= 1, got '0'" in capsys.readouterr().err
