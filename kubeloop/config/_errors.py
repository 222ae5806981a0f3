"""The one error type configuration problems raise.

Bad configuration must stop a program at start-up with one readable line (which file, what is wrong),
not a traceback from deep inside YAML or ssl. Every loader in this package raises `ConfigError`.
"""

from __future__ import annotations


class ConfigError(Exception):
    """A kubeconfig, in-cluster or credential problem. `str()` is a single line naming the source."""

    def __init__(self, message: str, *, source: str | None = None) -> None:
        text = " ".join(str(message).split())  # always one line
        if source:
            text = f"{source}: {text}"
        super().__init__(text)
        self.source = source


class ExecPluginError(ConfigError):
    """An exec credential plugin failed (not found, non-zero exit, bad output)."""


class ExecPluginTimeout(ExecPluginError):
    """An exec credential plugin did not exit within its timeout (it was killed)."""
