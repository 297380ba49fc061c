"""HTTP API: FastAPI app factory, routers, auth and schemas (not built yet)."""
