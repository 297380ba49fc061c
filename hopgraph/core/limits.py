"""Hard limits that the CLI and the API enforce alike (the settings choose values below them)."""

from __future__ import annotations

from hopgraph.core.errors import BadInputError

#: results of one query
TOP_K_MAX = 1000
#: rows one read-only Cypher statement returns
CYPHER_MAX_ROWS = 100_000
#: seconds one read-only Cypher statement may run
CYPHER_MAX_TIMEOUT_S = 600.0
#: the shortest time limit one may ask for (a smaller one could only ever time out)
CYPHER_MIN_TIMEOUT_S = 0.1
#: characters of the text of one query or question
QUERY_TEXT_MAX = 4000


def check_query_text(text: str) -> None:
    """Raise BadInputError unless ``text`` is 1 to QUERY_TEXT_MAX characters and not all blank (the API's rule)."""
    if not text.strip():
        raise BadInputError("the query text is blank")
    if len(text) > QUERY_TEXT_MAX:
        raise BadInputError(f"the query text is {len(text):,} characters long; at most {QUERY_TEXT_MAX:,} are accepted")
