"""``python -m hopgraph.cli``."""

from hopgraph.cli.main import app

app()
