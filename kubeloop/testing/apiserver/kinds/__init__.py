"""Everything kind-specific in the emulator: one module per API area (see `builtins.py` for the list).

`meta` holds the ObjectMeta rules every kind shares, `schema` the typed decoding of built-in
kinds, `structural` the CRD schema machinery, `custom` the strategy of CRD-served resources.
"""
