"""A cross-resource index: which Pods are Running, read by another kind's controller (see controller.py)."""
