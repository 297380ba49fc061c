"""Read-only Cypher for exploration: reject anything that could write, before it runs.

A READ transaction is not enough (ArcadeDB does not enforce READ mode), so the statement is
lexed (left to right: strings, backticked names, comments): comments, string literals and
backticked names are blanked out, then every remaining word is checked against the clauses that
write. Procedure calls are allowed only from a list of known read-only procedures; a procedure's
name is compared with backticks removed (``CALL `apoc`.`create`.node`` is ``apoc.create.node``),
and a CALL followed by anything but such a name or a subquery is refused. The check is deliberately
conservative: a map key or alias spelled like a write clause (``{set: 1}``) is refused too;
backtick it to use it.
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

_BACKTICKED = r"`(?:[^`]|``)*`"
#: one lexeme that hides words: a string literal, a backticked name, a block or a line comment
_LEXEME = re.compile(r"(?P<string>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")"
                     rf"|(?P<name>{_BACKTICKED})|(?P<comment>/\*.*?\*/|//[^\n]*)", re.DOTALL)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CALL = re.compile(r"\bCALL\b", re.IGNORECASE)
_PART = rf"(?:[^\W\d]\w*|{_BACKTICKED})"
_PROCEDURE = re.compile(rf"\s*({_PART}(?:\s*\.\s*{_PART})*)")
_SUBQUERY = re.compile(rf"\s*(?:\(\s*(?:\*|{_PART}(?:\s*,\s*{_PART})*)?\s*\)\s*)?\{{")
_IN_TX = re.compile(r"\bIN\s+(?:\d+\s+)?(?:CONCURRENT\s+)?TRANSACTIONS\b", re.IGNORECASE)


class ReadOnlyViolation(BadInputError):
    """The statement could write to the graph."""


def strip_literals(cypher: str, keep_names: bool = False) -> str:
    """Blank out comments, string literals and (unless ``keep_names``) backticked names, keeping
    positions; lexed left to right, so a quote inside a name or a '//' inside a string is no lexeme."""
    def blank(m: re.Match[str]) -> str:
        return m.group(0) if keep_names and m.group("name") else " " * len(m.group(0))

    return _LEXEME.sub(blank, cypher)


def procedure_name(name: str) -> str:
    """A procedure's dotted name as compared with the list: backticks and spaces gone, lower case."""
    parts = (p.strip() for p in re.findall(rf"{_BACKTICKED}|[^.`]+", name))
    return ".".join(p[1:-1].replace("``", "`") if p.startswith("`") else p for p in parts if p).lower()


def _property(text: str, start: int) -> bool:
    """Whether the word at ``start`` follows a '.' (``n.set`` is a property access, not a clause)."""
    before = text[:start].rstrip()
    return before.endswith(".") and not before.endswith("..")


def _called_procedures(text: str, named: str) -> list[str]:
    """The procedure after each CALL (``text``: all blanked; ``named``: backticked names kept);
    "" where a subquery follows; a CALL followed by anything else is refused."""
    out = []
    for m in _CALL.finditer(text):
        if _property(text, m.start()):
            continue
        rest = named[m.end():]
        if _SUBQUERY.match(rest):  # CALL { … } or CALL (n) { … }: its words are checked
            out.append("")
            continue
        name = _PROCEDURE.match(rest)
        if name is None:
            raise ReadOnlyViolation("CALL must name a procedure (or open a subquery): "
                                    f"{rest.strip()[:40]!r} is neither")
        out.append(name.group(1))
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
    for called in _called_procedures(text, strip_literals(cypher, keep_names=True)):
        if called and procedure_name(called) not in READ_PROCEDURES:
            raise ReadOnlyViolation(
                f"procedure {called!r} is not on the read-only list ({', '.join(sorted(READ_PROCEDURES))})")
    for w in _WORD.finditer(text):
        word = w.group(0).upper()
        if word in WRITE_WORDS:
            if _property(text, w.start()):
                continue
            raise ReadOnlyViolation(f"{word} is a write clause; exploration queries are read-only")
