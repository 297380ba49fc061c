"""The HTTP API (``hopgraph serve``): the FastAPI app factory, routers, auth, schemas and problem JSON."""
