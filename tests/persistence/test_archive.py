"""Saved learners that are zip bombs: refused fast, without inflating what they claim.

Each bomb is a small file with a member that inflates to 32 MiB of zeros (deflate packs it in
about 32 KB): a member declaring more than its field can need, a member declaring little and
inflating to more (its central directory edited), and a member no field names. The loader must
refuse each in one line naming the file and the member, in well under a second, allocating
a small part of what the member would inflate to (measured by tracemalloc, which numpy and
zlib's buffers report to).
"""

from __future__ import annotations

import functools
import io
import json
import struct
import time
import tracemalloc
import zipfile

import numpy as np
import pytest

from strategic_apple_tasting.persistence import archive
from tests import saved

#: What a bomb's member inflates to.
HUGE = 32 << 20
#: Bytes the loader may allocate while refusing a bomb: a small part of HUGE.
MOST = 4 << 20


@functools.cache
def _bomb(name: str) -> bytes:
    """SA-OLS's file with member ``name`` (replaced or added) inflating to HUGE zeros."""
    meta, files = saved.unpack(saved.saved("sa-ols"))
    files.setdefault(name, b"")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("meta.json", json.dumps(meta))
        for member, data in files.items():
            if member != name:
                zf.writestr(member, data)
                continue
            with zf.open(member, "w") as f:
                zero = bytes(1 << 20)
                for _ in range(HUGE >> 20):
                    f.write(zero)
    return out.getvalue()


def _declaring(data: bytes, name: str, size: int) -> bytes:
    """``data`` with member ``name``'s declared size set to ``size`` in its central directory
    entry and its local header (what a lying archive does; its data unchanged)."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        info = zf.getinfo(name)
    out = bytearray(data)
    local = info.header_offset
    assert out[local:local + 4] == b"PK\x03\x04"
    struct.pack_into("<I", out, local + 22, size)
    central = out.find(b"PK\x01\x02" + out[local + 4:local + 6])  # any entry: find ours
    while out[central + 46:central + 46 + len(name)] != name.encode():
        central = out.find(b"PK\x01\x02", central + 4)
    struct.pack_into("<I", out, central + 24, size)
    return bytes(out)


def _refusal(data: bytes) -> tuple[str, float, int]:
    """The loader's message for ``data``, the seconds it took and the peak bytes it allocated."""
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with pytest.raises(ValueError) as info:
            saved.load(data)
        seconds = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return str(info.value), seconds, peak


def test_a_member_declaring_more_than_its_field_needs_is_refused_before_it_is_read():
    data = _bomb("state.counts.npy")
    assert len(data) < HUGE // 500  # a small file...
    message, seconds, peak = _refusal(data)
    assert message == (
        f"the file: state.counts.npy declares {HUGE:,} bytes inflated, more than the 16,672 its "
        "field can need (the largest array of a SAOLS of d = 2 takes 288 bytes)")
    assert seconds < 0.5 and peak < MOST, (seconds, peak)


def test_a_member_inflating_beyond_what_it_declares_is_cut_at_its_declared_size():
    data = _declaring(_bomb("state.counts.npy"), "state.counts.npy", 120)
    message, seconds, peak = _refusal(data)
    assert message == ("the file is not a saved learner (state.counts.npy: Bad CRC-32 for file "
                       "'state.counts.npy')")
    assert seconds < 0.5 and peak < MOST, (seconds, peak)
    # the control: the same member declaring its true size is refused by its cap instead
    assert f"declares {HUGE:,} bytes inflated" in _refusal(_bomb("state.counts.npy"))[0]


def test_an_array_no_field_names_is_refused_without_being_read():
    message, seconds, peak = _refusal(_bomb("extra.npy"))
    assert message == "the file: it holds arrays no field uses: extra"
    assert seconds < 0.5 and peak < MOST, (seconds, peak)


def test_a_member_claiming_more_than_deflate_can_make_is_refused_before_it_is_read():
    data = _declaring(saved.saved("sa-ols"), "state.counts.npy", 10**9)
    message, _, peak = _refusal(data)
    assert message.startswith("the file is not a saved learner ('state.counts.npy' claims "
                              "1,000,000,000 bytes from ")
    assert peak < MOST


def test_the_members_together_are_capped(monkeypatch):
    good = saved.saved("sa-ols")
    saved.load(good)  # the control: the same file loads under the real cap
    monkeypatch.setattr(archive, "MAX_TOTAL", 1000)
    message, _, _ = _refusal(good)
    assert message.startswith("the file is not a saved learner (its members claim ")
    assert message.endswith(" bytes in all, more than the 1,000 a saved learner may hold)")


def test_a_member_compressed_otherwise_than_by_deflate_is_refused():
    meta, files = saved.unpack(saved.saved("sa-ols"))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_BZIP2) as zf:
        zf.writestr("meta.json", json.dumps(meta))
        for name, data in files.items():
            zf.writestr(name, data)
    message, _, _ = _refusal(out.getvalue())
    assert message == ("the file is not a saved learner (meta.json is compressed by method 12; "
                       "a saved learner's members are stored or deflated)")


def test_the_pending_decisions_cap_their_array_by_their_count():
    """pending.npy may hold one row a pending decision the document lists, no more."""
    meta, files = saved.unpack(saved.saved("sa-ols"))
    rows = len(meta["desk"]["pending"]["ids"])
    files["pending.npy"] = saved.npy(np.zeros((rows + 4000, 2)))
    with pytest.raises(ValueError) as info:
        saved.load(saved.pack(meta, files))
    assert str(info.value) == (
        f"the file: pending.npy declares {(rows + 4000) * 16 + 128:,} bytes inflated, more than "
        f"the {rows * 16 + (1 << 14):,} its field can need ({rows:,} pending decision(s) of 2 "
        "float64 features)")
