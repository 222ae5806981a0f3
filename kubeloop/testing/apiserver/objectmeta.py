"""The `metadata` values the server itself sets: uid, timestamps and names made from `generateName`.

Validation of what clients send in `metadata` is not here: each kind's `Strategy` owns it (the
rules and messages are in `kinds/meta.py`), because the real server's name rule, error group
and even whether ObjectMeta is validated at all differ per kind.
"""

from __future__ import annotations

import datetime
import random
import time
import uuid

_stamp: tuple[int, str] = (-1, "")  # the second formatted last, and its text


def now_rfc3339() -> str:
    """A timestamp as the server writes it (second precision, UTC, `Z`); every write stamps one, so
    the text is made once per second."""
    global _stamp
    second = int(time.time())
    if _stamp[0] != second:
        _stamp = (second, datetime.datetime.fromtimestamp(second, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
    return _stamp[1]


def new_uid() -> str:
    return str(uuid.uuid4())


_GEN_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # utilrand's alphanumerics (no vowels, no 0/1/3)
MAX_GENERATED_NAME_LENGTH = 63
_RANDOM_LENGTH = 5


def generate_name(prefix: str) -> str:
    """`names.SimpleNameGenerator`: the prefix cut to 58 characters plus 5 random characters,
    so that the name fits a DNS label."""
    return prefix[:MAX_GENERATED_NAME_LENGTH - _RANDOM_LENGTH] + "".join(
        random.choice(_GEN_ALPHABET) for _ in range(_RANDOM_LENGTH))
