"""A parent/child controller with server-side apply that stays quiet in steady state (see controller.py)."""
