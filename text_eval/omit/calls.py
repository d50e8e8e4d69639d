"""Model calls for the construction stages: served from the result store when present, so a re-run
resumes without new calls; per-stage call and (approximate) token counts for the Table 7 report."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from framebench.backends.base import Backend, Chat, Decoding
from framebench.store import ResultStore, result_key


@dataclass
class StageCalls:
    calls: int = 0  # requests the stage needs (Table 7 "Calls")
    new_calls: int = 0  # of those, sent to the backend in this run (0 on a full resume)
    input_chars: int = 0
    output_chars: int = 0

    def as_dict(self) -> dict:
        d = asdict(self)
        # Approximate tokens: 4 characters per token (no tokenizer is assumed for remote backends).
        d["avg_input_tokens"] = math.ceil(self.input_chars / 4 / self.calls) if self.calls else 0
        d["avg_output_tokens"] = math.ceil(self.output_chars / 4 / self.calls) if self.calls else 0
        return d


class CachedGenerator:
    def __init__(self, backend: Backend, store: ResultStore, batch_size: int = 16):
        self.backend = backend
        self.store = store
        self.batch_size = batch_size
        self.fingerprint = backend.fingerprint()
        self.stats: dict[str, StageCalls] = {}

    def run(self, stage: str, requests: list[tuple[str, Chat]], decoding: Decoding) -> dict[str, str]:
        """``{request_id: output}`` for every request, generating only what the store lacks."""
        from rich.progress import Progress

        stats = self.stats.setdefault(stage, StageCalls())
        dec = decoding.as_dict()
        keys = {rid: result_key(self.fingerprint, rid, chat, dec) for rid, chat in requests}
        found = self.store.get_many(keys.values())
        outputs = {rid: found[k]["output"] for rid, k in keys.items() if k in found}
        todo = [(rid, chat) for rid, chat in requests if rid not in outputs]
        if todo:
            with Progress(transient=True) as progress:
                task = progress.add_task(f"omit {stage}", total=len(todo))
                for start in range(0, len(todo), self.batch_size):
                    batch = todo[start : start + self.batch_size]
                    texts = self.backend.generate([chat for _, chat in batch], decoding)
                    if len(texts) != len(batch):
                        raise RuntimeError(f"backend returned {len(texts)} outputs for {len(batch)} chats")
                    self.store.put_many(
                        (keys[rid], rid, {"output": text}) for (rid, _), text in zip(batch, texts, strict=True)
                    )
                    outputs.update({rid: text for (rid, _), text in zip(batch, texts, strict=True)})
                    stats.new_calls += len(batch)
                    progress.advance(task, len(batch))
        stats.calls += len(requests)
        stats.input_chars += sum(len(m["content"]) for _, chat in requests for m in chat)
        stats.output_chars += sum(len(outputs[rid]) for rid, _ in requests)
        return outputs
