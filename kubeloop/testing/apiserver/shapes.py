"""The two JSON shapes passed through the whole emulator, named once.

`Obj` is a decoded Kubernetes object (or any JSON object in one); `Cause` is one field error in a
`Status`'s `details.causes` (reason, message, field).
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]
Cause = dict[str, str]
