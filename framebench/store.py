"""Append-only, crash-safe result store (SQLite in WAL mode).

Each response is stored under a key built from everything that determines it: the model
fingerprint, the item id, a hash of the exact prompt, and the decoding parameters. Re-running a
command therefore resumes (keys already present are served from the store), while a changed prompt,
model or decoding setting gets a new key and is never served a stale answer.

Every ``put`` is its own committed transaction with ``synchronous=FULL``: a process killed at any
moment loses at most the response in flight. The primary key makes duplicates impossible.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

STORE_FILE = "store.sqlite"


def stable_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def result_key(fingerprint: str, item_id: str, prompt: Any, settings: Mapping[str, Any]) -> str:
    """The store key: sha256 over (model fingerprint, item id, prompt hash, the settings that change
    the result: an answer mode's key settings, a text job's decoding, an episode's run settings)."""
    return key_from_prompt_hash(fingerprint, item_id, sha256(stable_json(prompt)), settings)


def key_from_prompt_hash(fingerprint: str, item_id: str, prompt_hash: str, settings: Mapping[str, Any]) -> str:
    """:func:`result_key` given ``sha256(stable_json(prompt))`` already computed."""
    return sha256(stable_json([fingerprint, item_id, prompt_hash, dict(settings)]))


class ResultStore:
    """A key -> JSON value table; values are written once and never updated."""

    def __init__(self, path: str | Path):
        path = Path(path)
        if path.is_dir() or path.suffix == "":
            path.mkdir(parents=True, exist_ok=True)
            path = path / STORE_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(path, timeout=60, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS results ("
            " key TEXT PRIMARY KEY, item_id TEXT NOT NULL, value TEXT NOT NULL,"
            " created REAL NOT NULL)"
        )

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM results").fetchone()[0]

    def __contains__(self, key: str) -> bool:
        return self._db.execute("SELECT 1 FROM results WHERE key=?", (key,)).fetchone() is not None

    def get(self, key: str) -> dict[str, Any] | None:
        row = self._db.execute("SELECT value FROM results WHERE key=?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def get_many(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        keys = list(keys)
        found: dict[str, dict[str, Any]] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for key, value in self._db.execute(
                f"SELECT key, value FROM results WHERE key IN ({marks})", chunk
            ):
                found[key] = json.loads(value)
        return found

    def put(self, key: str, item_id: str, value: Mapping[str, Any]) -> bool:
        """Store one value; returns False when the key was already present (first write wins)."""
        cur = self._db.execute(
            "INSERT OR IGNORE INTO results (key, item_id, value, created) VALUES (?, ?, ?, ?)",
            (key, item_id, stable_json(value), time.time()),
        )
        return cur.rowcount == 1

    def put_many(self, entries: Iterable[tuple[str, str, Mapping[str, Any]]]) -> int:
        """Store several values in one transaction (all or none survive a crash)."""
        rows = [(k, i, stable_json(v), time.time()) for k, i, v in entries]
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            cur = self._db.executemany(
                "INSERT OR IGNORE INTO results (key, item_id, value, created) VALUES (?, ?, ?, ?)",
                rows,
            )
        return cur.rowcount

    def items(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        for key, item_id, value in self._db.execute(
            "SELECT key, item_id, value FROM results ORDER BY rowid"
        ):
            yield key, item_id, json.loads(value)
