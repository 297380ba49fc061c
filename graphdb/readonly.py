"""Read-only Cypher for exploration: reject anything that could write, before it runs.

A READ transaction is not enough (ArcadeDB does not enforce READ mode), so the statement is
lexed: comments, string literals and backticked names are blanked out, then every remaining
word is checked against the clauses that write. Procedure calls are allowed only from a list
of known read-only procedures. The check is deliberately conservative: a map key or alias
spelled like a write clause (``{set: 1}``) is refused too; backtick it to use it.
"""

from __future__ import annotations

import re

from hopgraph.core.errors import BadInputError

WRITE_WORDS = frozenset({
    "CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "DROP", "FOREACH", "LOAD", "ALTER",
    "RENAME", "GRANT", "DENY", "REVOKE", "START", "STOP", "TERMINATE", "USE", "INSERT", "FINISH",
})
READ_PROCEDURES = frozenset({
    "db.labels", "db.relationshiptypes", "db.propertykeys", "db.indexes", "db.constraints",
    "db.schema.visualization", "db.schema.nodetypeproperties", "db.schema.reltypeproperties",
    "dbms.components", "db.info",
})

_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_LINE_COMMENT = re.compile(r"//[^\n]*")
_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"", re.DOTALL)
_BACKTICK = re.compile(r"`(?:[^`]|``)*`")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CALL = re.compile(r"\bCALL\s+([A-Za-z_][A-Za-z0-9_.]*)\s*\(?", re.IGNORECASE)
_IN_TX = re.compile(r"\bIN\s+(?:\d+\s+)?(?:CONCURRENT\s+)?TRANSACTIONS\b", re.IGNORECASE)


class ReadOnlyViolation(BadInputError):
    """The statement could write to the graph."""


def strip_literals(cypher: str) -> str:
    """Blank out comments, string literals and backticked names (keeping positions)."""
    def blank(m: re.Match[str]) -> str:
        return " " * len(m.group(0))

    out = cypher
    # strings first, so a '//' inside a string is not a comment; then comments
    for pattern in (_STRING, _BACKTICK, _BLOCK_COMMENT, _LINE_COMMENT):
        out = pattern.sub(blank, out)
    return out


def check_read_only(cypher: str) -> None:
    """Raise ReadOnlyViolation if the statement contains a write clause or a writing procedure."""
    if not cypher or not cypher.strip():
        raise ReadOnlyViolation("the statement is empty")
    text = strip_literals(cypher)
    if ";" in text.strip().rstrip(";"):
        raise ReadOnlyViolation("one statement at a time: ';' separates several statements")
    if _IN_TX.search(text):
        raise ReadOnlyViolation("CALL { … } IN TRANSACTIONS writes in batches and is not allowed here")
    for m in _CALL.finditer(text):
        name = m.group(1).lower()
        if name and not name.startswith("{") and name not in READ_PROCEDURES:
            raise ReadOnlyViolation(
                f"procedure {m.group(1)!r} is not on the read-only list ({', '.join(sorted(READ_PROCEDURES))})")
    for w in _WORD.finditer(text):
        word = w.group(0).upper()
        if word in WRITE_WORDS:
            # `n.set` is a property access, not a clause
            before = text[: w.start()].rstrip()
            if before.endswith(".") and not before.endswith(".."):
                continue
            raise ReadOnlyViolation(f"{word} is a write clause; exploration queries are read-only")
