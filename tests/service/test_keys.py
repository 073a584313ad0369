"""The key check's memory: bounded, whatever ids clients send; revocation still takes effect
within the cache time."""

from __future__ import annotations

import time

import pytest

from strategic_apple_tasting.service import keys

pytest.importorskip("sqlalchemy", reason="the 'serve' extra is not installed")



def test_fresh_key_ids_do_not_grow_the_cache(engine):
    key = keys.create_key(engine, "kept")
    check = keys.KeyCheck(engine)
    for k in range(3 * keys.MAX_CACHED):  # every request a new, well-formed, unknown id
        assert check.check(f"Bearer sat_{k:012x}_guess")[1] is not None
        if k % 100 == 0:  # the key in use is read often: the most recently used stay
            assert check.check(f"Bearer {key}") == (key.split("_")[1], None)
    assert len(check) <= keys.MAX_CACHED
    # Ids no key can have (a key's id is at most 32 hexadecimal digits) are not even looked
    # up, so they are never remembered.
    before = len(check)
    for k in range(200):
        why = check.check(f"Bearer sat_{'z' * 8000}{k}_guess")[1]
        assert "malformed" in why
    assert len(check) == before


def test_a_revoked_key_stops_working_within_the_cache_time_with_a_full_cache(engine):
    key = keys.create_key(engine, "revoked")
    check = keys.KeyCheck(engine)
    assert check.check(f"Bearer {key}")[1] is None
    for k in range(keys.MAX_CACHED - 1):  # a full cache, the key still in it
        check.check(f"Bearer sat_{k:012x}_guess")
    assert len(check) == keys.MAX_CACHED
    keys.revoke_key(engine, key.split("_")[1])
    revoked = time.monotonic()
    while check.check(f"Bearer {key}")[1] is None:
        assert time.monotonic() - revoked < keys.CACHE_SECONDS + 0.5, "the key still works"
        time.sleep(0.05)
    assert "not valid" in check.check(f"Bearer {key}")[1]
