"""Differential scenarios recorded from a real kube-apiserver 1.24 and replayed against the emulator
(`harness.py` says what is compared; `record.py` records; `tests/testing/test_differential.py` replays)."""
