"""The explorer's cost on top of the API: for real queries typed into ``/ui`` in headless Chromium, the
time of the ``POST /query`` call as the page sees it and the time to draw the returned subgraph, and
the drawing of a 200-node subgraph; the ratio of drawing to querying is printed.

    python -m benchmarks.explorer_render ../shared/data/hotpotqa-100 --data-dir /tmp/eval-store \\
        [--queries 30] [--mode graph]

The store is the one ``hopgraph eval`` builds for the dataset under ``--data-dir`` (ingested if needed).
Needs Debian's chromium and chromium-driver.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")



def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def main() -> None:
    from selenium.webdriver.common.by import By

    from hopgraph.api.app import create_app
    from hopgraph.api.server import background_server
    from hopgraph.app.platform import Platform
    from hopgraph.cli.gnn import eval_settings
    from hopgraph.core.config import load_settings
    from hopgraph.evaluation.evaluate import load_dataset
    from tests.browser import DRAW_200_NODES, chromium, wait_for

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset", type=Path)
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--mode", default="graph")
    args = ap.parse_args()
    ds = load_dataset(args.dataset)
    questions = list(ds.queries.values())[: args.queries]
    base = load_settings().model_copy(update={"data_dir": args.data_dir})
    s = eval_settings(base, args.dataset, len(questions))
    fetch, draw, sizes = [], [], []
    with Platform(s) as p:
        p.ingest([ds.corpus])
        with background_server(create_app(s, platform=p), _free_port()) as url, \
                tempfile.TemporaryDirectory() as profile, chromium(Path(profile)) as driver:
            driver.get(f"{url}/ui")
            driver.execute_script(f"document.getElementById('mode').value = {json.dumps(args.mode)}")
            box = driver.find_element(By.ID, "q")
            for q in [questions[0], *questions]:  # the first one warms the page and the server up
                box.clear()
                box.send_keys(q)
                driver.find_element(By.CSS_SELECTOR, "#query-form button").click()
                drawn = wait_for(driver, "return window.explorer.lastRenderMs")
                fetch.append(driver.execute_script("return window.explorer.lastFetchMs"))
                draw.append(drawn)
                sizes.append(driver.execute_script("return window.explorer.nodes.length"))
            synthetic = []
            for _ in range(5):
                driver.execute_script(DRAW_200_NODES)
                synthetic.append(wait_for(driver, "return window.explorer.lastRenderMs"))
    fetch, draw, sizes = fetch[1:], draw[1:], sizes[1:]
    out = {"queries": len(fetch), "mode": args.mode, "api_ms_p50": round(statistics.median(fetch), 1),
           "draw_ms_p50": round(statistics.median(draw), 1), "nodes_p50": statistics.median(sizes),
           "nodes_max": max(sizes), "draw_200_nodes_ms_median": round(statistics.median(synthetic), 1)}
    out["draw_over_api"] = round(out["draw_ms_p50"] / max(out["api_ms_p50"], 1e-9), 2)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
