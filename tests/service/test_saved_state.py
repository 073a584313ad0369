"""The learner state a service keeps in its database is loaded like a file nobody vouches
for: only the configured learner may be named (nothing else is imported), it must be
that learner, and a malformed state stops the start (and ``sat serve check``) in one line."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from strategic_apple_tasting.cli.main import main
from strategic_apple_tasting.service import store
from strategic_apple_tasting.service.app import Service
from strategic_apple_tasting.service.config import ServiceConfig
from tests import saved

from .conftest import httpx  # noqa: F401  (skips the module without the 'serve' extra)

EVIL = """
import pathlib
pathlib.Path({marker!r}).write_text("imported")
"""


@pytest.fixture
def database(tmp_path, monkeypatch):
    """A service's database after one start and stop (its learner saved at position 0), a
    module that says when it is imported, and ``tamper(edit)``, which edits the saved state's
    document (the digest recomputed) in place."""
    marker = tmp_path / "imported"
    (tmp_path / "evil_service.py").write_text(EVIL.format(marker=str(marker)))
    monkeypatch.syspath_prepend(str(tmp_path))
    url = f"sqlite:///{tmp_path}/service.db"
    config = ServiceConfig(learner="sa-ols", params={"delta": 0.3, "r0": 0.0}, dimension=2,
                           database=url)
    Service(config).open().close()
    engine = store.connect(url)

    def tamper(meta=None, arrays=None):
        s = store.learner_state
        with engine.begin() as conn:
            data = conn.execute(sa.select(s.c.state)).scalar_one()
            doc, files = saved.unpack(data)
            if meta:
                meta(doc)
            for name, change in (arrays or {}).items():
                arr = saved.array(files, name)
                change(arr)
                files[f"{name}.npy"] = saved.npy(arr)
            conn.execute(sa.update(s).values(state=saved.pack(doc, files)))

    yield url, config, tamper, marker
    engine.dispose()


def _refused(url, config, capsys, message):
    """``sat serve check`` and a start both refuse the database in one line."""
    assert main(["serve", "check", "--database", url]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("sat: error: "), err
    assert message in err[0], err[0]
    service = Service(config)
    with pytest.raises(ValueError) as info:
        service.open()
    service.close()
    assert message in str(info.value) and "\n" not in str(info.value)


def test_the_saved_state_may_name_only_the_configured_learner(database, capsys):
    url, config, tamper, marker = database
    assert main(["serve", "check", "--database", url]) == 0  # the control: it loads
    capsys.readouterr()
    tamper(meta=lambda m: m.update(learner="evil_service:Learner"))
    _refused(url, config, capsys, "the saved learner state at log position 0: learner "
             "'evil_service:Learner' is not a registered learner, and the caller did not "
             "allow it (nothing was imported)")
    assert not marker.exists()


def test_the_saved_state_must_be_the_configured_learner(database, capsys):
    url, config, tamper, _ = database
    def other(meta):  # shifted OLS: SA-OLS's parameters but two, its state but one flag
        meta["learner"] = "shifted-ols"
        del meta["params"]["accept_when_locked"]
        del meta["params"]["warmup"]
        meta["state"]["fields"]["clean_only"]["value"] = False
    tamper(meta=other)
    _refused(url, config, capsys, "the saved learner state at log position 0 is learner "
             "ShiftedOLS, but the service runs 'sa-ols'")


def test_a_malformed_saved_state_stops_the_start_in_one_line(database, capsys):
    url, config, tamper, _ = database

    def phase(counts):
        counts[1] = 10**6  # the kernels index the schedule by it
    tamper(arrays={"state.counts": phase})
    _refused(url, config, capsys, "the saved learner state at log position 0: state.counts[1] "
             "(the phase) must be in [0, 1], got 1000000")
