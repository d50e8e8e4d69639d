"""Headless Debian chromium for the browser tests: find it, dump the DOM it built, summarise it."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path


def chromium_binary() -> str | None:
    for name in (os.environ.get("FRAMEBENCH_CHROMIUM", ""), "chromium", "chromium-browser",
                 "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def dump_dom(chromium: str, url: str, profile: Path) -> str:
    """The DOM chromium built for a page, after scripts and image errors had their chance to run."""
    result = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         f"--user-data-dir={profile}", "--virtual-time-budget=3000", "--dump-dom", url],
        capture_output=True, text=True, timeout=120, check=True)
    return result.stdout


class DomSummary(HTMLParser):
    """A DOM dump's title, element ids, img srcs, table-cell texts, ``tr.record`` row texts, all text."""

    def __init__(self, dom: str) -> None:
        super().__init__()
        self.title, self.ids, self.img_srcs = "", set(), []
        self.cells: list[str] = []
        self.rows: list[str] = []
        self.text: list[str] = []
        self._in: list[str] = []
        self.feed(dom)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if attributes.get("id"):
            self.ids.add(attributes["id"])
        if tag == "img":
            self.img_srcs.append(attributes.get("src") or "")
        if tag == "tr" and attributes.get("class") == "record":
            self.rows.append("")
        self._in.append(tag)
        if tag in ("td", "th"):
            self.cells.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._in:
            while self._in.pop() != tag:
                pass

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if "title" in self._in:
            self.title += data
        if ("td" in self._in or "th" in self._in) and self.cells:
            self.cells[-1] += data
        if "tr" in self._in and self.rows:
            self.rows[-1] += data


def chromedriver_binary() -> str | None:
    for name in (os.environ.get("FRAMEBENCH_CHROMEDRIVER", ""), "chromedriver"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def open_browser(chromium: str, chromedriver: str, width: int = 1280, height: int = 800):
    """A headless chromium driven through chromedriver (selenium), its viewport exactly
    ``width`` x ``height`` CSS pixels."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                     "--disable-dev-shm-usage", f"--window-size={width},{height}"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(chromedriver), options=options)
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
    return driver


@contextlib.contextmanager
def serve_view(runs) -> Iterator[str]:
    """``framebench view`` on a free port; yields its URL and stops it afterwards."""
    proc = subprocess.Popen([sys.executable, "-m", "framebench", "view", *map(str, runs), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        match = re.search(r"at (http://127\.0\.0\.1:\d+/) ", line)
        assert match, (line, proc.stderr.read() if proc.poll() is not None else "")
        yield match.group(1)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
