"""The read-only Cypher guard, pure logic: lexing as Cypher does, write clauses, the allow-list."""

import pytest

from hopgraph.graphdb.readonly import READ_NAMES, READ_NAMESPACES, ReadOnlyViolation, check_read_only

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
    "MATCH (n) WHERE n.name = 'CREATE (m) DETACH DELETE n' RETURN n",  # write words in a string
    'RETURN "it\\"s MERGE time" AS s, \'a\\\'b SET\' AS t',  # escaped quotes keep the string open
    "MATCH (n) /* CREATE (m)\n MERGE (x) */ RETURN n",  # in a block comment
    "MATCH (n) // CREATE (m)\r\nRETURN n",  # \r\n ends the comment once
    "MATCH (n:`CREATE`) RETURN n.`SET` AS `DELETE`",  # backticked names
    "MATCH (n) RETURN apoc.coll.sum([1, 2]), apoc.text.join(['a'], ','), apoc.map.merge({}, {})",
    "RETURN point.distance(point({x: 0, y: 0}), point({x: 1, y: 1})), date.truncate('day', date())",
    "RETURN `apoc`.`coll`.sum([1]) AS s, toUpper('x') AS u, count(*) AS c",  # built-ins have no namespace
    "MATCH (a {id: 1}) CALL apoc.path.expand(a, 'RELATED', null, 1, 2) YIELD path RETURN path",
    "CALL db.schema.visualization()",
    "SHOW TRANSACTIONS",
    "MATCH (n) RETURN n.transactions",
    "MATCH (n) RETURN n.x1.create, n.`2`.set",  # a property of a property
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
    # a line comment ends at every Cypher line terminator, not only at \n (issue 54, bug 8)
    "MATCH (n) // harmless\rCREATE (m:Evil) RETURN n",
    "MATCH (n) // harmless\u2028CREATE (m:Evil) RETURN n",
    "MATCH (n) // harmless\u2029DETACH DELETE n",
    "MATCH (n) // harmless\u0085SET n.x = 1",
    "MATCH (n) // a\rb\nRETURN n // c\rMERGE (x)",
    # a procedure that writes, called as a function or by CALL, whatever its spelling
    "RETURN apoc.create.node(['X'], {})",
    "RETURN apoc . create /* */ . node(['X'], {}) AS n",
    "RETURN `apoc`.create.`node`(['X'], {}) AS n",
    "RETURN `apoc.create.node`(['X'], {}) AS n",
    "CALL apoc.create.node(['X'], {}) YIELD node RETURN node",
    "CALL apoc.create.node",
    "MATCH (n) WITH apoc.nodes.delete(n, 1) AS x RETURN x",
    "RETURN apoc.cypher.runFirstColumnSingle('CREATE (n) RETURN n', {})",
    "MATCH (n) RETURN n.apoc.create.node(1)",  # a namespace that starts with a variable is still one
    "CALL db.createLabel('X')",
    "CALL { MATCH (n) RETURN n } IN $n CONCURRENT TRANSACTIONS RETURN 1",
    "MATCH (n) CALL { WITH n RETURN n AS m } IN TRANSACTIONS RETURN m",
    "RETURN 'unclosed CREATE (n)",  # an unclosed string hides nothing
    "MATCH (n) /* unclosed DELETE n",
    "RETURN 1.\nCREATE (n)",  # '1.' may be a float to some lexers: the CREATE is then a clause
]


@pytest.mark.parametrize("q", READS)
def test_reads_pass(q: str) -> None:
    check_read_only(q)


@pytest.mark.parametrize("q", WRITES)
def test_writes_are_refused(q: str) -> None:
    with pytest.raises(ReadOnlyViolation):
        check_read_only(q)


def test_refusals_name_what_is_refused() -> None:
    with pytest.raises(ReadOnlyViolation, match=r"function 'apoc\.create\.node' is not on the read-only allow-list"):
        check_read_only("RETURN apoc.create.node(['X'], {})")
    with pytest.raises(ReadOnlyViolation, match=r"procedure 'apoc\.create\.node' is not on the read-only allow-list"):
        check_read_only("CALL apoc.create.node(['X'], {}) YIELD node RETURN node")
    with pytest.raises(ReadOnlyViolation, match="CREATE is a write clause"):
        check_read_only("MATCH (n) // x\rCREATE (m)")


def test_the_allow_list_is_lower_case_and_has_no_writing_namespace() -> None:
    assert all(n == n.lower() for n in READ_NAMES | READ_NAMESPACES)
    writers = ("create", "merge", "delete", "refactor", "periodic", "cypher", "trigger", "load", "export")
    assert not [ns for ns in READ_NAMESPACES if any(w in ns.split(".") for w in writers)]
    assert "db" not in READ_NAMESPACES and "apoc" not in READ_NAMESPACES  # db.createLabel, apoc.create.*
