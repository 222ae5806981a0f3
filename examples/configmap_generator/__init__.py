"""A CRD that produces ConfigMaps (see controller.py)."""
