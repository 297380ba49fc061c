import pytest

from hopgraph.graphdb.readonly import ReadOnlyViolation, check_read_only

READS = [
    "MATCH (n:Entity) RETURN n.name LIMIT 5",
    "MATCH (e:Entity {name: 'CREATE something'}) RETURN e",  # the word is inside a string
    "MATCH (n) // DELETE n\nRETURN count(n)",  # ... or in a comment
    "MATCH (n) /* SET n.x = 1 */ RETURN n.set, n.`delete`",
    "CALL db.labels() YIELD label RETURN label",
    "MATCH (n) CALL { WITH n MATCH (n)--(m) RETURN count(m) AS d } RETURN n, d",
    "EXPLAIN MATCH (n) RETURN n",
    "CALL `db`.`labels`() YIELD label RETURN label",  # backticked names of a read-only procedure
    "CALL `db.labels`() YIELD label RETURN label",
    "CALL /* the labels */ db . labels() YIELD label RETURN label",
    "MATCH (n:`it's`) RETURN n.name AS `a \"name\"`",  # quotes inside backticks are no strings
    "MATCH (n) CALL (n) { MATCH (n)--(m) RETURN count(m) AS d } RETURN d",
    "MATCH (n) RETURN n.call",  # a property, not a CALL
]
WRITES = [
    "CREATE (n:X)",
    "match (n) detach delete n",
    "MATCH (n) SeT n.x = 1",
    "MERGE (n:X {id: 1})",
    "MATCH (n) REMOVE n.x",
    "DROP INDEX entity_name",
    "LOAD CSV FROM 'file:///x.csv' AS row RETURN row",
    "MATCH (n) CALL { WITH n DELETE n } IN TRANSACTIONS OF 10 ROWS",
    "MATCH (n) CALL { WITH n SET n.x = 1 } RETURN n",
    "CALL apoc.create.node(['X'], {}) YIELD node RETURN node",
    "CALL dbms.security.createUser('x', 'y', false)",
    "MATCH (n) RETURN n; MATCH (m) DELETE m",
    "MATCH (n) FOREACH (x IN [1] | SET n.y = x)",
    "/* harmless */ CrEaTe (n)",
    "MATCH (n) WITH n // comment\n DELETE n",
    "",
    "CALL `apoc.create.node`(['X'], {}) YIELD node RETURN node",  # a backticked writing procedure
    "CALL `apoc`.`create`.`node`(['X'], {}) YIELD node RETURN node",
    "CALL apoc.`create`.node(['X'], {}) YIELD node RETURN node",
    "CALL `APOC.CREATE.NODE`(['X'], {}) YIELD node RETURN node",
    "CALL `db.labels``x`()",  # an escaped backtick makes another name
    "CALL 'apoc.create.node'(['X'], {})",  # quoted: not a name on the list
    "CALL \"apoc.create.node\"(['X'], {})",
    "MATCH (n:`a'`) CREATE (m) RETURN '`'",  # a quote in backticks must not hide the CREATE
]


@pytest.mark.parametrize("q", READS)
def test_reads_pass(q: str) -> None:
    check_read_only(q)


@pytest.mark.parametrize("q", WRITES)
def test_writes_are_refused(q: str) -> None:
    with pytest.raises(ReadOnlyViolation):
        check_read_only(q)
