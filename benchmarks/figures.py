"""Figures of the benchmark scripts that keep no report file, with their commands (``benchmarks/results.py``
puts them in RESULTS.md), and the machine most figures were measured on."""

DEV_MACHINE = "2-core x86 VM, CPU only; shipped MiniLM and spaCy models, no LLM"

#: figures of the other benchmark scripts: (what, figure, command, date, machine)
OTHER_FIGURES: tuple[tuple[str, str, str, str, str], ...] = (
    ("Full ingest, 2wiki corpus (6,119 documents, 48k entities, 7,446 communities)",
     "570 s with embedded relationship texts; 375 s with composed relationship vectors (the default); 330 s with "
     "composed community vectors too", "python -m benchmarks.ingest --corpora ../shared/data/2wiki-corpus",
     "2026-11-24", DEV_MACHINE),
    ("Peak memory of an ingest and of pcst queries, 2wiki corpus (6,119 passages, 48.7k entities)",
     "ingest with its post-steps: 2.49 GB RSS for the whole process (models included); the 478 questions of "
     "2wiki-dev-500 in rrf, graph and pcst on that store: 1.40 GB; pcst alone with the whole-graph export it "
     "built before the candidate subgraph: 3.40 GB",
     "hopgraph eval ../shared/data/2wiki-dev-500 --modes bm25,rrf,graph,pcst (a fresh data dir; the process's "
     "VmHWM read every 10 s)", "2026-11-27", DEV_MACHINE + "; shared with other jobs"),
    ("Re-ingest after changes, 2wiki corpus", "one changed document 1.5-1.9 s, visible to queries 0.7-0.9 s later; "
     "1% changed (62 documents) in 4.2% of the full ingest's time", "python -m benchmarks.ingest", "2026-11-24",
     DEV_MACHINE),
    ("Ingest stage split, 2wiki corpus", "embed 40%, communities 19%, writes 17%, resolution 11%, extraction 8%",
     "python -m benchmarks.ingest", "2026-11-24", DEV_MACHINE),
    ("Local ingest against its bound: the first 500 records of the 2wiki corpus (588 chunks, 6.6k entities), "
     "every post-step included, models loaded first; the faster of two runs, alternating with the bound",
     "chunk embedding alone 5.4 s (92 documents/s); end-to-end ingest 27.4 s (18.3 documents/s, ratio 0.20) with "
     "one embedding thread per core (the default), 31.0 s (0.18) with one thread "
     "(`--embed-threads 1`); the same command on the commit before the pipeline and the word-piece batching: 37.8 s "
     "(0.17, one run). Busy share of the wall time: embedding 43%, communities 21%, waiting for extraction 19%, "
     "graph writes 11%, resolution 7%. The embedding stage also embeds about 4,100 entity names: 2.5 s on their "
     "own with two threads (3.9 s when batched by characters)",
     "python -m benchmarks.ingest_bound --docs 500 --repeat 2 (report: benchmarks/reports/ingest-bound.json)",
     "2026-11-27", DEV_MACHINE),
    ("Extraction workers, podcasts corpus", "ingest 470 s → 390-394 s (extraction 149 s → 66-80 s)",
     "python -m benchmarks.ingest --corpora ../shared/data/podcasts", "2026-11-24", DEV_MACHINE),
    ("One extraction worker a batch ahead (extraction.worker, since removed), podcasts corpus",
     "ingest 470 s without it → 500 s "
     "with it at the same CPU priority, 485 s at the lowest (the embedder already uses both cores)",
     "HOPGRAPH_EXTRACTION__WORKER=true python -m benchmarks.ingest --corpora ../shared/data/podcasts",
     "2026-11-24", DEV_MACHINE),
    ("Graph-mode latency against BM25 in the same run (stage caps off, question embeddings computed first; "
     "stores ingested before)",
     "2wiki-dev-500 (478 queries): graph p50 30.5 ms, p95 36.1 ms; bm25 p50 2.6 ms: 11.7x (63.8 ms and about 20x "
     "with the walk stopping at 1e-6, every score sorted and the adjacency read column-wise); locomo-dev (386): "
     "graph p50 5.9 ms, bm25 2.5 ms: 2.4x. The top 10 of every query equal the earlier runs' on both sets",
     "hopgraph eval ../shared/data/2wiki-dev-500 --modes bm25,graph (and locomo-dev)", "2026-11-27", DEV_MACHINE),
    ("The walk's stopping tolerance (graph mode, every query of each developer set, question embeddings "
     "computed first): top-10 rankings and the expansion stage's median against a stop at 1e-6",
     "at 1e-3 (the default): identical top 10 for 478 of 478 queries on 2wiki-dev-500, 100 of 100 on hotpotqa-100 "
     "and musique-100, 182 of 182 on lihua-dev, 386 of 386 on locomo-dev; expansion p50 33.9 -> 18.6 ms "
     "(2wiki-dev-500), 8.6 -> 4.6 (hotpotqa-100), 11.3 -> 6.3 (musique-100), 5.3 -> 3.5 (lihua-dev), 3.0 -> 1.8 "
     "(locomo-dev); at 1e-4 the same rankings, 2wiki-dev-500 22.9 ms",
     "python -m benchmarks.ppr_tolerance ../shared/data/SET --data-dir D (D: where hopgraph eval ingested SET)",
     "2026-11-27", DEV_MACHINE + "; a CI run beside it"),
    ("Cold CLI commands, the graph server running, the packaged sample (median of 5 processes)",
     "hopgraph --help 0.37 s; status 1.18 s; doctor 1.21 s; query --mode bm25 1.42 s; query --mode dense 1.54 s; "
     "query --mode graph 1.61 s (questions embedded from the ONNX copy of the model, torch not imported; with the "
     "model itself, loaded with torch, dense took 5.79 s and graph 6.05 s)", "python -m benchmarks.cli_cold --runs 5",
     "2026-11-27", DEV_MACHINE),
    ("RAPTOR clustering in a fresh process (200 random 384-d vectors, the default tree settings; median of 3 "
     "processes each, alternating; umap imported inside the timed call)",
     "UMAP's numba functions loaded from numba's cache: 3.86 s (process 4.76 s); umap imported as before they were "
     "cached, so that the process compiles them (pynndescent's own cache used in both): 17.67 s (process "
     "18.97 s): 4.6x", "python -m benchmarks.raptor_cold --runs 3", "2026-11-29", DEV_MACHINE),
    ("spaCy extraction workers with and without PyTorch: one new worker started and 100 hotpotqa-100 passages "
     "parsed in it, six runs alternating with the same pipeline copied under a meta.json that requires "
     "spacy-transformers (so that the worker imports torch, as every worker did before)",
     "start 1.20 s against 2.49 s (median); parse 2.84 s against 3.02 s; the same extraction (1,911 entities, "
     "their mentions and relations); the worker's peak RSS 291 MB against 469 MB",
     "python -m benchmarks.worker_start --runs 6 --passages 100", "2026-11-29", DEV_MACHINE),
    ("Embedding batch size on a CPU", "batches of 8 against 64: 1.31x passages/s, 2.65x titles/s",
     "python -m benchmarks.embed", "2026-11-23", DEV_MACHINE),
    ("Ray ingest against a local ingest, the first 300 records of the 2wiki corpus (write batches of 16, models "
     "loaded before the clock starts, one run each; Ray on a private instance at 127.0.0.2 with num_cpus = the "
     "workers)",
     "local 12.63 documents/s (23.7 s, the writer busy 52% of it); Ray with 1 worker 11.87 documents/s (25.3 s); "
     "with 2 workers 11.62 documents/s (25.8 s). On two cores the Ray workers, the writer and the graph server "
     "share the same cores, so a second worker adds no capacity: this machine cannot show Ray's scaling. Per "
     "document on a worker: 63-65 ms (embedding 39-45, extraction 19-21, chunking 2-3); the writer 28-31 ms, "
     "so one writer keeps up with about two workers of this speed",
     "python -m benchmarks.ingest_scale --docs 300 --workers 1 2", "2026-11-27", DEV_MACHINE),
    ("Index state at 0.1M and 0.3M entities (10 or 8 edges per entity, one document per 10 entities)",
     "0.1M entities, 2.2M joint edges (the walk by push, nothing assembled): served state 0.36 GB RSS, full build "
     "0.6 s, refresh after a 100-document delta 0.27 s (chunk ids kept) and 0.32 s (rows move; medians of 6), "
     "process RSS while refreshing 1.13 GB, graph pass p50 77 ms; 0.1M entities, 1.8M joint edges (under 2M: "
     "the walk's matrix assembled with each state): 0.37 GB, 0.7 s (0.12 s of it assembling), 0.36 s and 0.56 s, "
     "1.2 GB, graph pass by power iteration p50 43 ms; 0.3M entities, 6.6M joint edges (float16 entity vectors): "
     "0.73 GB, 1.7 s, 0.55 s and 0.63 s, 2.1 GB, graph pass p50 88 ms (torch loaded, as in a server)",
     "python -m benchmarks.freshness --synthetic 10000:100000:1000000 (and 10000:100000:800000, "
     "30000:300000:3000000)", "2026-11-30", DEV_MACHINE),
    ("Index state at scale (1.1M nodes, 22M joint edges)", "full build 7.0 s; served state 2.0 GB RSS; graph pass "
     "(entity seeds + PPR by push, torch loaded as in a server) p50 184 ms; refresh after a 100-document delta "
     "median 1.41 s (no row moves) and 1.76 s (new chunks and entities), process RSS 6.9 GB. The code of "
     "2026-11-24 (a05da79), run after it the same day: 6.8 s, 2.0 GB, 183 ms, 1.42 s and 1.98 s. A process "
     "without torch (a cold `hopgraph query`) widens the float16 entity vectors in numpy: graph pass 1,037 ms",
     "python -m benchmarks.freshness --synthetic 100000:1000000:10000000", "2026-11-30", DEV_MACHINE),
    ("index.pregrow at the same scale", "refresh median 0.76 s (no row moves) and 0.91 s (new chunks and "
     "entities); without index.pregrow 0.84 s and 1.62 s; process RSS 7.0 GB",
     "python -m benchmarks.freshness --synthetic 100000:1000000:10000000 [--no-pregrow]", "2026-11-24", DEV_MACHINE),
    ("Restart of hopgraph serve on the full 2wiki store", "serving 4.7 s after start (median of five)",
     "python -m benchmarks.freshness", "2026-11-23", DEV_MACHINE),
    ("Explorer page, hotpotqa-100 store", "POST /query p50 46 ms; drawing the subgraph 14 ms (26 nodes), 23 ms "
     "(200 nodes)", "python -m benchmarks.explorer_render ../shared/data/hotpotqa-100 --data-dir D", "2026-11-23",
     DEV_MACHINE + "; headless Chromium"),
    ("Access groups: graph mode for a key with two groups (it reads half of the corpus) against the same "
     "query with no access filter, 2wiki corpus (6,119 documents in two groups, 7,198 chunks, 48.7k entities), "
     "the 478 questions of 2wiki-dev-500 asked both ways in turn",
     "p50 47.4 ms against 70.5 ms (ratio 0.67), p95 83.6 against 109.9 ms; the key's first query, which derives "
     "its view of the index state, 839 ms", "python -m benchmarks.access_overhead", "2026-11-28",
     DEV_MACHINE + "; shared with other jobs"),
    ("Access groups with dense searches filtered inside the vector engine and views that weigh relations by "
     "readable support (commit 63d0c11): graph and dense for a key with two groups (it reads half of the "
     "corpus) against the same query with no access filter, the first 1,000 documents of the 2wiki corpus in "
     "two groups (1,148 chunks, 9,720 entities), 300 questions of 2wiki-dev-500 asked both ways in turn",
     "graph p50 22.6 ms against 26.6 ms (ratio 0.85), p95 70.0 against 66.1 ms, the key's first query (it "
     "derives the view) 200 ms; dense p50 2.4 against 2.4 ms (ratio 1.03), p95 6.4 against 6.5 ms",
     "hopgraph ingest of the grouped records into D, then python -m benchmarks.access_overhead --data-dir D "
     "--questions 300", "2026-12-07", DEV_MACHINE + "; shared with other jobs"),
    ("One user's memory: locomo-dev-conv, each of its five conversations ingested into a store of its own and "
     "asked its own questions, the per-query results of the 386 questions pooled (commit 689b7ba)",
     "R@5 graph 78.6, graph-0-hops 79.9, bm25 77.5, rrf 77.1, mix 77.8, dense 66.7, auto 78.6; graph - bm25 +1.2 "
     "[-1.5, +4.0]; the walk (graph - graph-0-hops) -1.3 [-3.5, +1.0]; multi_hop graph 60.1 vs rrf 61.5; "
     "R@1 graph 49.8 vs bm25 49.3; MRR@10 74.3 vs 74.2 (paired bootstrap 95%)",
     "python -m benchmarks.conversations_pooled ../shared/data/locomo-dev-conv --modes graph,graph-0-hops,bm25,"
     "dense,rrf,mix,auto", "2026-12-07", DEV_MACHINE + "; shared with other jobs"),
    ("The restructuring of 2026-12-07 (each mode a folder with shared parts, evaluation its own package, mode "
     "options in their own tables, backends as folders declaring capabilities, the platform's roles, Ray actor "
     "pools) changes no ranking: the top 10 of every query of 14 modes (graph, auto, raptor, sections, naive, "
     "dense, bm25, rrf, local, global, hybrid, mix, pcst, image), 4567ce2 against the code after it, each set's "
     "store ingested once by 4567ce2 and queried by both",
     "identical for all of them: hotpotqa-100 1,400 of 1,400 rankings, musique-100 1,400 of 1,400, lihua-dev "
     "2,548 of 2,548, locomo-dev 5,404 of 5,404; gnn not compared (no checkpoint was trained); a fresh ingest of "
     "locomo-dev and lihua-dev by 4567ce2 reproduces its own rankings exactly, and a fresh ingest of lihua-dev by "
     "the code after it gives 2,548 of 2,548 identical rankings (the ingest path unchanged too)",
     "hopgraph eval ../shared/data/SET --modes graph,auto,raptor,sections,naive,dense,bm25,rrf,local,global,"
     "hybrid,mix,pcst,gnn,image --no-stage-caps --out SET.json by each version on a copy of the same store, then "
     "python -m benchmarks.same_rankings BEFORE.json AFTER.json", "2026-12-07",
     DEV_MACHINE + "; shared with other jobs"),
    ("The access work of 2026-12-07 (vector groups, resolution inside groups, support-weighted views, path "
     "checks, modes' traces) changes nothing for a collection whose documents and keys have none: the top 10 of "
     "every query of graph, dense, bm25, rrf and naive, each set ingested fresh by each version, e3ff55b against "
     "7429fa6 (locomo-dev, lihua-dev) and against cdc60fb (hotpotqa-100, musique-100)",
     "identical for all of them: locomo-dev 1,930 of 1,930 rankings, lihua-dev 910 of 910, hotpotqa-100 500 of "
     "500, musique-100 500 of 500; 2wiki-dev-500 not measured again",
     "hopgraph eval ../shared/data/SET --modes graph,dense,bm25,rrf,naive --no-stage-caps --out SET.json with "
     "each version in a fresh data dir, rankings compared per query", "2026-12-07",
     DEV_MACHINE + "; shared with other jobs"),
    ("Access groups change nothing for a collection whose documents and keys have none: the top 10 of every "
     "query, the code before access groups (b9f83bc) against the code with them (bbc7f5b), each set's store "
     "ingested once by the code before",
     "identical for all of them: lihua-dev 5,460 of 5,460 rankings (30 modes), hotpotqa-100 3,000 of 3,000, "
     "musique-100 3,000 of 3,000, locomo-dev 11,580 of 11,580 (30 modes each), 2wiki-dev-500 2,868 of 2,868 "
     "(dense, bm25, rrf, graph, local, mix)",
     "hopgraph eval ../shared/data/SET [--modes ...] --out SET.json with each version on the same store, rankings "
     "compared per query", "2026-11-28", DEV_MACHINE + "; shared with other jobs"),
    ("RAPTOR tree build", "34 s for 994 chunks (4 branches, 259 summaries); 110 s for 7,198 chunks (23 branches)",
     "hopgraph tree", "2026-11-23", DEV_MACHINE),
    ("PPR on the GPU (1M entities, 10M edges, batch of 32 queries)", "power iteration 34 ms (CPU 3,490 ms); push "
     "9 ms (CPU 283 ms, top-20 agreement with power 0.994); GNN inference on a 2k-node subgraph 3.1-5.5 ms (CPU "
     "6.7-8.6 ms); PCST 9-10 ms", "python -m benchmarks.gpu", "2026-11-24",
     "NVIDIA H100 80GB HBM3, torch 2.11.0+cu130, 16 cores"),
)
