"""The ``hopgraph`` command line (typer): the outermost shell, which can also start the API server."""
