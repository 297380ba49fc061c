"""Hard limits that the CLI and the API enforce alike (the settings choose values below them)."""

#: results of one query
TOP_K_MAX = 1000
#: rows one read-only Cypher statement returns
CYPHER_MAX_ROWS = 100_000
#: seconds one read-only Cypher statement may run
CYPHER_MAX_TIMEOUT_S = 600.0
#: the shortest time limit one may ask for (a smaller one could only ever time out)
CYPHER_MIN_TIMEOUT_S = 0.1
