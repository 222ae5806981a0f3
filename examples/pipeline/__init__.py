"""Dynamic targets across clusters: a Pipeline whose environments point at any kind in any cluster (see controller.py)."""
