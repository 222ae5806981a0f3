"""``python -m benchmarks.peers``: see cli.py."""

from benchmarks.peers.cli import main

raise SystemExit(main())
