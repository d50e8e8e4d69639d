"""``keyword:WORD``: answers "Yes" when the last user turn contains WORD, else "No"."""

from __future__ import annotations

from framebench.backends.base import Chat, Decoding
from framebench.registry import Engine, Option


class KeywordBackend:
    def __init__(self, word: str, shout: bool = False):
        self.spec = f"keyword:{word}"
        self.word, self.shout = word, shout

    def fingerprint(self) -> str:
        return f"{self.spec}|shout={self.shout}"

    def info(self) -> dict[str, str]:
        return {"word": self.word}

    def generate(self, chats: list[Chat], decoding: Decoding, on_batch=None) -> list[str]:
        answers = ["Yes" if self.word in chat[-1]["content"] else "No" for chat in chats]
        return [a.upper() if self.shout else a for a in answers]


KEYWORD = Engine("keyword", "model", lambda word, **options: KeywordBackend(word, **options),
                 options=(Option("shout", bool, "answer in capitals"),), arg_help="WORD",
                 help="says Yes when the prompt contains WORD",
                 device="remote")  # scheduled as an API client: a fraction of a CPU per Ray worker
