"""Source formats, pruning of vanished documents, and communities on real stores."""

from __future__ import annotations

import json
from pathlib import Path

from hopgraph.app.platform import Platform
from hopgraph.ingest.caller import Caller
from hopgraph.ingest.sections import unmarked
from hopgraph.ingest.source_text import Skipped, SourceText
from hopgraph.ingest.sources import expand_paths, read_sources
from tests.paths import SHARED_DATA

EXTS = [".txt", ".md", ".html", ".jsonl", ".jpg", ".png"]


def test_formats_and_per_record_errors(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Title\n\nSome **bold** [link](http://x) text about Paris.\n```\ncode\n```\n")
    (tmp_path / "b.html").write_text("<html><head><title>Page</title><style>x{}</style></head>"
                                     "<body><p>Hello <b>London</b></p><script>evil()</script></body></html>")
    (tmp_path / "c.jsonl").write_text(
        json.dumps({"_id": "r1", "title": "Teutberga", "text": "She was a queen of Lotharingia."}) + "\n"
        + "{not json\n"
        + json.dumps({"_id": "r2"}) + "\n"
        + json.dumps({"_id": "img1", "metadata": {"image": "1.jpg", "captions": ["A dog runs.", "A brown dog."]}})
        + "\n"
        + json.dumps({"_id": "img2", "image": "2.jpg", "captions": []}) + "\n")
    (tmp_path / "photo.jpg").write_bytes(b"\xff\xd8\xff\xe0fakejpeg")
    (tmp_path / "photo.txt").write_text("A cat on a mat.\nA sleepy cat.\n")
    (tmp_path / "broken.png").write_bytes(b"not an image")
    (tmp_path / "broken.txt").write_text("a caption for a broken image")
    (tmp_path / "lonely.jpg").write_bytes(b"\x89PNG....")
    items = list(read_sources([tmp_path], EXTS, 10_000))
    docs = {i.document.source.rsplit("/", 1)[-1]: i for i in items if isinstance(i, SourceText)}
    skipped = {i.source.rsplit("/", 1)[-1]: i.reason for i in items if isinstance(i, Skipped)}
    assert unmarked(docs["a.md"].text).startswith("Title") and "**" not in docs["a.md"].text
    assert "code" not in docs["a.md"].text
    assert docs["b.html"].document.title == "Page" and "evil" not in docs["b.html"].text
    assert "London" in docs["b.html"].text
    assert docs["c.jsonl#r1"].text == "Teutberga\nShe was a queen of Lotharingia."  # title + text
    assert docs["c.jsonl#r1"].document.metadata["corpus_id"] == "r1"
    img = docs["c.jsonl#img1"].document
    assert img.kind == "image" and img.uri == "1.jpg" and docs["c.jsonl#img1"].text == "A dog runs.\nA brown dog."
    assert docs["photo.jpg"].document.kind == "image" and "sleepy cat" in docs["photo.jpg"].text
    assert "malformed JSON" in skipped["c.jsonl:2"] and "no 'text'" in skipped["c.jsonl:3"]
    assert "no captions" in skipped["c.jsonl:5"]
    assert "unreadable image" in skipped["broken.png"] and "no captions" in skipped["lonely.jpg"]
    assert "broken.txt" not in docs  # a sidecar caption file is not a document of its own


def test_removed_records_are_pruned_and_unreadable_files_keep_their_documents(
        platform: Platform, tmp_path: Path) -> None:
    corpus = tmp_path / "c.jsonl"
    recs = [{"_id": f"r{i}", "title": f"Title {i}", "text": f"Alan Turing visited Paris in year {1930 + i}."}
            for i in range(4)]
    corpus.write_text("\n".join(json.dumps(r) for r in recs))
    assert platform.ingest([corpus]).documents_ingested == 4
    corpus.write_text("\n".join(json.dumps(r) for r in recs[:3]))
    report = platform.ingest([corpus])
    assert report.documents_deleted == 1 and platform._store.counts()["Document"] == 3
    corpus.write_text("\n".join(json.dumps(r) for r in recs[:2]) + "\n{oops")
    report = platform.ingest([corpus])
    assert report.documents_deleted == 0 and platform._store.counts()["Document"] == 3  # nothing lost


def test_a_folder_walk_skips_the_data_dir(platform: Platform, tmp_path: Path) -> None:
    """The data dir (here ``tmp_path / "data"``) inside an ingested folder is not walked: its stores and
    index files are never documents. A file in it named directly is refused too, unless the run is an
    upload job's (it reads its uploads folder), and a later walk of the parent folder does not prune it."""
    data = platform.settings.data_dir
    assert data.parent == tmp_path
    (tmp_path / "notes.txt").write_text("Alan Turing worked at Bletchley Park.")
    upload = data / "uploads" / "up.txt"
    upload.parent.mkdir(parents=True, exist_ok=True)
    upload.write_text("Ada Lovelace wrote the first program.")
    (data / "stray.txt").write_text("A store's own file that happens to look like text.")
    walked = [f.name for f in expand_paths([tmp_path], EXTS, data)]
    assert walked == ["notes.txt"]
    assert list(expand_paths([data, upload], EXTS, data)) == []  # named: refused as well
    refused = platform.ingest([upload])
    assert refused.documents_ingested == 0 and "data dir" in refused.skipped[str(upload.resolve())]
    assert platform.ingest([upload], caller=Caller(roots=(), uploads=upload.parent)).documents_ingested == 1
    report = platform.ingest([tmp_path])
    assert report.documents_ingested == 1 and report.documents_deleted == 0
    sources = sorted(Path(d.source).name for d in platform._store.documents_under(str(tmp_path.resolve())))
    assert sources == ["notes.txt", "up.txt"]


def test_communities_are_built_and_follow_changes(platform: Platform, tmp_path: Path) -> None:
    data = SHARED_DATA / "hotpotqa-100" / "corpus.jsonl"
    lines = data.read_text().splitlines()[:150]
    corpus = tmp_path / "hp.jsonl"
    corpus.write_text("\n".join(lines))
    report = platform.ingest([corpus])
    assert report.communities > 5
    g = platform._store
    comms = g.read("MATCH (c:Community) RETURN c.id AS id, c.level AS level, c.size AS size, c.title AS t, "
                   "c.summary AS s")
    assert all(c["title" if "title" in c else "t"] and c["s"].startswith("Key entities") for c in comms)
    assert platform.vectors.count("communities") == len(comms)
    members = g.read("MATCH (e:Entity)-[:IN_COMMUNITY]->(c:Community) RETURN c.id AS id, count(e) AS n")
    assert {m["id"]: m["n"] for m in members} == {c["id"]: c["size"] for c in comms}
    levels = {c["level"] for c in comms}
    if len(levels) > 1:  # finer levels point at their parents
        assert g.read("MATCH (:Community)-[p:PARENT]->(:Community) RETURN count(p) AS n")[0]["n"] > 0
    # a small change rewrites few communities; the rest keep their ids
    corpus.write_text("\n".join(lines[:-3]))
    before = {c["id"] for c in comms}
    platform.ingest([corpus])
    after = {r["id"] for r in g.read("MATCH (c:Community) RETURN c.id AS id")}
    assert len(before & after) >= 0.4 * len(before)  # 48% measured; cold-start Leiden keeps 40%
    assert platform.vectors.count("communities") == len(after)
    # shrinking to a sliver: the warm start must only label communities that still have nodes
    # (graspologic panicked on a label beyond the node count)
    corpus.write_text("\n".join(lines[:3]))
    report = platform.ingest([corpus])
    left = g.read("MATCH (c:Community) RETURN count(c) AS n")[0]["n"]
    assert report.documents_deleted == len(lines) - 6 and 0 < left < len(after)


def test_warm_started_communities_survive_a_rewritten_document(platform: Platform, tmp_path: Path) -> None:
    """Regression: graspologic-native's warm-started Leiden panics (index out of bounds) on this
    small graph; the ingest must fall back to a cold start instead of failing."""
    note = tmp_path / "note.md"
    note.write_text("# Ledger\nThe Quillfeather Ledger was kept by Marnie Oskarsdottir.")
    assert platform.ingest([note]).communities >= 1
    note.write_text("# Ledger\nThe Quillfeather Ledger was kept by Tobias Wrenfield in Lisbon.")
    report = platform.ingest([note])
    assert report.documents_ingested == 1 and report.communities >= 1
    names = {r["name"] for r in platform._store.read(
        "MATCH (e:Entity)-[:IN_COMMUNITY]->(:Community) RETURN DISTINCT e.name AS name")}
    assert "Tobias Wrenfield" in names and "Marnie Oskarsdottir" not in names


def test_community_embedding_text_drops_type_tags_and_is_capped() -> None:
    from hopgraph.core.records import Community
    from hopgraph.ingest.communities import embed_text

    c = Community(id="c", level=0, size=3, member_ids=["a", "b", "c"], title="Paris, France, Seine",
                  summary="Key entities: Paris (GPE), France (GPE), river bank (CONCEPT). Key relations: "
                          "Paris in France; Seine flow_through Paris.")
    assert embed_text(c, 500) == ("Paris, France, Seine. Key entities: Paris, France, river bank. Key relations: "
                                  "Paris in France; Seine flow_through Paris.")
    assert embed_text(c, 20) == "Paris, France, Seine. Key entities: Paris,"


def test_markdown_and_html_headings_are_sentences_and_titles(platform: Platform, tmp_path: Path) -> None:
    names = ["Marrowind Engineering", "Keswick Dam", "Pell Observatory"]
    for name in names:
        (tmp_path / f"{name.split()[0].lower()}.md").write_text(
            f"# {name}\n\n{name} was founded in Caldermouth by Rosalind Avery.\n\n## History\n\n{name} grew.\n")
    (tmp_path / "page.html").write_text("<html><body><h1>Tarnhollow Mill</h1><p>Tarnhollow Mill is a mill near "
                                        "Caldermouth.</p></body></html>")
    found = {d.document.source.rsplit("/", 1)[-1]: d for d in read_sources([tmp_path], EXTS, 1 << 20)
             if isinstance(d, SourceText)}
    assert found["marrowind.md"].document.title == "Marrowind Engineering"
    assert unmarked(found["marrowind.md"].text).startswith("Marrowind Engineering.\n\nMarrowind Engineering was")
    assert found["page.html"].document.title == "Tarnhollow Mill"  # no <title>: the first <h1>
    assert unmarked(found["page.html"].text).startswith("Tarnhollow Mill.\nTarnhollow Mill is")
    platform.ingest([tmp_path])
    entities = [r["name"] for r in platform._store.read("MATCH (e:Entity) RETURN e.name AS name")]
    doubled = [e for e in entities if any(e.count(n) > 1 for n in [*names, "Tarnhollow Mill"])]
    assert doubled == [] and {"Marrowind Engineering", "Tarnhollow Mill"} <= set(entities)


def test_relations_and_summaries_read_as_written(platform: Platform, tmp_path: Path) -> None:
    """Relation labels and community summaries use the predicate as written ("born in", not the
    lemma "bear in"), and a sentence that states two key relations is quoted once."""
    (tmp_path / "vane.md").write_text(
        "# Rosalind Vane\n\nThe composer Rosalind Vane was born in Tarnhollow. Rosalind Vane was mayor of "
        "Tarnhollow and lived in Caldermouth with Pell Avery.\n")
    platform.ingest([tmp_path])
    rels = {(r["type"], r["label"]) for r in platform._store.read(
        "MATCH ()-[r:RELATED]->() RETURN r.type AS type, r.label AS label")}
    assert ("bear_in", "born in") in rels and ("live_in", "lived in") in rels
    summaries = " ".join(r["summary"] for r in platform._store.read("MATCH (c:Community) RETURN c.summary AS summary"))
    assert "born in Tarnhollow" in summaries and "bear in" not in summaries
    for quote in {q for q in summaries.split('"')[1::2]}:  # each quoted sentence once per summary
        assert all(s.count(f'"{quote}"') <= 1 for s in (r["summary"] for r in platform._store.read(
            "MATCH (c:Community) RETURN c.summary AS summary")))
    context = platform.query("Where was Rosalind Vane born?", mode="global", top_k=3).context
    assert "born in" in context and "bear in" not in context
