"""Cold CLI commands: a new ``hopgraph`` process per run, with the graph server already running.

Ingests the packaged sample into a fresh data dir (its own embedded ArcadeDB on free ports), then
times whole processes, ``--runs`` each: ``status``, ``doctor``, ``query --mode bm25`` (no model
loaded), ``query --mode dense`` (loads the embedder) and ``query --mode graph`` (the embedder and the
index state), beside two baselines of the same run: ``python -c pass`` (the interpreter) and
``hopgraph --help`` (the CLI's own start-up). Prints the median, min and max seconds and each
command's ratio to ``--help``.

    python -m benchmarks.cli_cold [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.resources import files
from pathlib import Path

from benchmarks.common import free_port

COMMANDS: dict[str, list[str]] = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "hopgraph --help": [sys.executable, "-m", "hopgraph.cli", "--help"],
    "hopgraph status": [sys.executable, "-m", "hopgraph.cli", "status"],
    "hopgraph doctor": [sys.executable, "-m", "hopgraph.cli", "doctor"],
    "hopgraph query --mode bm25": [sys.executable, "-m", "hopgraph.cli", "query", "Who founded Vexmoor?",
                                   "--mode", "bm25"],
    "hopgraph query --mode dense": [sys.executable, "-m", "hopgraph.cli", "query", "Who founded Vexmoor?",
                                    "--mode", "dense"],
    "hopgraph query --mode graph": [sys.executable, "-m", "hopgraph.cli", "query", "Who founded Vexmoor?",
                                    "--mode", "graph"],
}


def run_once(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """Seconds one process takes from start to exit (it must succeed)."""
    t = time.perf_counter()
    out = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)
    took = time.perf_counter() - t
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(argv[2:])} failed ({out.returncode}): {out.stderr[-2000:]}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="processes per command (default 5)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hopgraph-cold-") as tmp:
        folder = Path(tmp)
        (folder / "empty.toml").write_text("", encoding="utf-8")
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "HOPGRAPH_CONFIG": str(folder / "empty.toml"),
               "HOPGRAPH_GRAPH__BOLT_PORT": str(free_port()), "HOPGRAPH_GRAPH__HTTP_PORT": str(free_port())}
        sample = str(files("hopgraph") / "sample")
        try:
            run_once([sys.executable, "-m", "hopgraph.cli", "ingest", "--no-progress", sample], env, folder)
            for argv in COMMANDS.values():  # once untimed: the OS file cache holds the libraries
                run_once(argv, env, folder)
            times = {name: [run_once(argv, env, folder) for _ in range(args.runs)] for name, argv in COMMANDS.items()}
        finally:
            subprocess.run([sys.executable, "-m", "hopgraph.cli", "db", "stop"], env=env, cwd=folder,
                           capture_output=True, timeout=120)
    base = statistics.median(times["hopgraph --help"])
    print(f"cold CLI commands, graph server running, {args.runs} runs each, {os.cpu_count()} cores")
    print(f"{'command':32} {'median s':>9} {'min':>6} {'max':>6} {'x --help':>9}")
    for name, samples in times.items():
        med = statistics.median(samples)
        print(f"{name:32} {med:9.2f} {min(samples):6.2f} {max(samples):6.2f} {med / base:9.2f}")


if __name__ == "__main__":
    main()
