"""The lock-out check on four books: every learner that lends keeps lending; the ones that
do not are caught."""

from __future__ import annotations

import numpy as np
import pytest

from strategic_apple_tasting.learners import LEARNERS, make_learner
from strategic_apple_tasting.scenarios import (
    check_keeps_lending,
    from_lending,
    lending_pays,
    load_csv,
    load_dataset,
)

from .test_lending import needs_data, write_loans
from .test_taiwan import _first

#: reject-all lends to nobody by design: it is the check's control, not a learner to pass.
NEVER_LENDS = ("reject-all",)
#: Rounds and seeds per book: long enough that every learner is past its warm-up and its
#: first phases (explore-then-commit's on the CSV's d = 4) by the second half; FICO's rows are
#: cheap, German credit's d = 49 is not. The Taiwan card holders play their first 2,000 rows
#: (the engine's benchmark searches every row once a process: 40 s on all 30,000).
SIZES = {"fico": (20_000, 2), "german-credit": (4_000, 2), "csv": (6_000, 2),
         "taiwan-credit": (4_000, 2)}


@pytest.fixture(scope="module")
def books(tmp_path_factory):
    csv = write_loans(tmp_path_factory.mktemp("lockout"), n=2000, seed=3)
    loans = load_csv(csv, label="bad", default_value=1, features=["income", "debt", "cash"],
                     gameable=["cash"], rewards=(1.0, -1.0))
    return {"fico": load_dataset("fico"), "csv": from_lending(loans, title="lending-csv"),
            "taiwan-credit": _first(load_dataset("taiwan-credit"), 2_000)}


def _book(books, name):
    return load_dataset(name) if name == "german-credit" else books[name]


BOOKS = ["fico", pytest.param("german-credit", marks=needs_data), "csv", "taiwan-credit"]


#: On the Taiwan card holders (d = 29) the lender's learners only: LinUCB's numerical best
#: response and the experts' learners take minutes there, and none of them can lock out (they
#: pass on the other three books).
LENDERS = ("offset-logistic", "sa-logistic", "naive-logistic", "sa-ols", "offset-ols",
           "naive-greedy", "accept-all")


@pytest.mark.parametrize("book", BOOKS)
def test_every_learner_that_lends_keeps_lending(books, book):
    data = _book(books, book)
    horizon, seeds = SIZES[book]
    for name in LENDERS if book == "taiwan-credit" else LEARNERS:
        if name in NEVER_LENDS:
            continue
        found = check_keeps_lending(name, data, horizon=horizon, seeds=seeds)
        assert len(found.shares) == seeds and min(found.shares) >= 0.01, name


@pytest.mark.parametrize("book", BOOKS)
def test_a_learner_that_lends_to_nobody_fails(books, book):
    data = _book(books, book)
    horizon, seeds = SIZES[book]
    with pytest.raises(AssertionError, match=r"^reject-all stopped lending on .*: granted "
                                              r"0\.00% of the applicants of rounds"):
        check_keeps_lending("reject-all", data, horizon=horizon, seeds=seeds)


def test_the_logistic_lock_out_on_fico_is_caught_without_exploration(books):
    # The failure the check exists for: fitted on its two warm-up loans, a logistic
    # scorecard puts every FICO applicant below 5/6 and never lends again. With exploration
    # off it is caught; with the default it keeps lending.
    for name in ("sa-logistic", "offset-logistic", "naive-logistic"):
        with pytest.raises(AssertionError, match=rf"^{name} stopped lending on fico"):
            check_keeps_lending(make_learner(name, explore=0.0), books["fico"])
        assert min(check_keeps_lending(name, books["fico"]).shares) > 0.01


def test_a_book_where_lending_does_not_pay_is_refused(books):
    # With r0 above every loan's reward nobody is worth a loan: lending to nobody is right.
    assert lending_pays(books["fico"]) > 0
    assert lending_pays(books["fico"], r0=1.0) <= 0
    with pytest.raises(ValueError, match=r"^lending does not pay on fico \(the least-squares "
                                         r"rule earns .* per applicant above r0\)"):
        check_keeps_lending("reject-all", books["fico"], r0=1.0)


@pytest.mark.parametrize("kwargs, message", [
    (dict(horizon=99), r"^horizon must be an integer from 100 to 1,000,000,000, got 99$"),
    (dict(horizon=1e4), r"^horizon must be an integer .* got 10000\.0$"),
    (dict(seeds=0), r"^seeds must be an integer from 1 to 10,000, got 0$"),
    (dict(min_share=0.0), r"^min_share must be a finite number > 0 and <= 1, got 0\.0$"),
    (dict(min_share=1.0), r"^min_share must be in \(0, 1\), got 1\.0$"),
    (dict(min_share=float("nan")), r"^min_share must be"),
])
def test_bad_input(books, kwargs, message):
    with pytest.raises(ValueError, match=message):
        check_keeps_lending("sa-ols", books["fico"], **kwargs)


def test_the_shares_are_what_the_engine_counted(books):
    # The measured share is the second half's acceptances over its rounds: accept-all's is 1.
    assert check_keeps_lending("accept-all", books["fico"], horizon=1000, seeds=2).shares == (
        1.0, 1.0)
    assert np.isfinite(check_keeps_lending("sa-ols", books["csv"], horizon=1000,
                                           seeds=1).pays)
