"""Headless Chromium (Debian's chromium + chromium-driver) through Selenium, for the explorer's tests:
the flags that keep it off the network, a performance log to read every request it made, and
screenshots saved as test artefacts under ``test-artifacts/`` (and, with ``HOPGRAPH_SCREENSHOTS=1``, the
manual's pictures under ``docs/images/``)."""

from __future__ import annotations

import io
import json
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.paths import REPO_ROOT

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
ARTIFACTS = REPO_ROOT / "test-artifacts"
#: the manual's pictures, written by the browser tests only when HOPGRAPH_SCREENSHOTS=1
DOC_IMAGES = REPO_ROOT / "docs" / "images"
needs_browser = pytest.mark.skipif(
    not (CHROMIUM and CHROMEDRIVER),
    reason="no headless browser: Debian's chromium and chromium-driver are not installed "
           "(`make test` installs them when it runs as root with apt)")


@contextmanager
def chromium(profile: Path) -> Iterator[Any]:
    """A headless Chromium driven by Selenium, with its network requests logged."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--window-size=1400,1000", f"--user-data-dir={profile}"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=opts)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


#: draws a 200-node subgraph on the explorer page (query, 20 seeds, 100 entities, 79 passages)
DRAW_200_NODES = """
window.explorer.lastRenderMs = null;
const nodes = [{id: 'query', label: 'q', kind: 'query', level: 0}], edges = [];
for (let i = 0; i < 199; i++) {
  const kind = i < 20 ? 'seed' : (i < 120 ? 'entity' : 'chunk');
  nodes.push({id: 'n' + i, label: 'node ' + i, kind, level: kind === 'seed' ? 1 : (kind === 'entity' ? 2 : 3),
              weight: 0.5, signals: {dense: 0.5}, signal: 'dense'});
  edges.push({from: i < 20 ? 'query' : 'n' + (i % 20), to: 'n' + i, label: 'r', weight: 0.5});
}
drawSubgraph({nodes, edges});"""
#: the browser's own pages (its new-tab page before the first navigation): not requests of the page
INTERNAL = ("chrome://", "chrome-untrusted://", "chrome-search://", "devtools://", "about:")


def wait_for(driver: Any, script: str, timeout: float = 60.0) -> Any:
    """The first truthy value ``script`` returns on the page (polled), or ``TimeoutError``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = driver.execute_script(script)
        if value:
            return value
        time.sleep(0.05)
    raise TimeoutError(f"the page never satisfied: {script}")


def requested_urls(driver: Any) -> list[str]:
    """Every URL requested since the last call (from the DevTools performance log), the browser's
    own internal pages left out."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            url = message["params"]["request"]["url"]
            if not url.startswith(INTERNAL):
                urls.append(url)
    return urls


def screenshot(driver: Any, name: str) -> Path:
    """Save a screenshot under test-artifacts/ and return its path."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    driver.save_screenshot(str(path))
    return path


def doc_screenshot(driver: Any, name: str) -> Path | None:
    """With ``HOPGRAPH_SCREENSHOTS=1``, save a screenshot as the manual's ``docs/images/<name>.png`` (256
    colours, a few hundred KB at most) and return its path; otherwise write nothing and return None."""
    if os.environ.get("HOPGRAPH_SCREENSHOTS") != "1":
        return None
    from PIL import Image

    DOC_IMAGES.mkdir(exist_ok=True)
    path = DOC_IMAGES / f"{name}.png"
    with Image.open(io.BytesIO(driver.get_screenshot_as_png())) as image:
        image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)
    return path
