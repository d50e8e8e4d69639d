"""``openai:`` constrained answers from ``top_logprobs`` (pytest-httpserver), and the clear error
when the server returns none."""

from __future__ import annotations

import json
import math

import pytest

from framebench.backends import load_backend
from framebench.backends.openai_api import probabilities_from_top_logprobs
from framebench.errors import UserError


def _completion(top: list[tuple[str, float]] | None) -> dict:
    choice = {"index": 0, "finish_reason": "length", "message": {"role": "assistant", "content": "x"}}
    if top is not None:
        choice["logprobs"] = {"content": [{"token": top[0][0], "logprob": top[0][1], "bytes": None,
                                           "top_logprobs": [{"token": t, "logprob": lp, "bytes": None}
                                                            for t, lp in top]}]}
    return {"id": "c", "object": "chat.completion", "created": 0, "model": "m", "choices": [choice],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def test_probabilities_from_top_logprobs_by_hand():
    top = [("Yes", math.log(0.5)), (" yes", math.log(0.1)), ("No", math.log(0.2)), ("Maybe", math.log(0.2))]
    probs = probabilities_from_top_logprobs(top, ("Yes", "No"))
    assert probs == pytest.approx({"Yes": 0.6 / 0.8, "No": 0.2 / 0.8})
    assert probabilities_from_top_logprobs([("Maybe", 0.0)], ("Yes", "No")) == {}
    assert probabilities_from_top_logprobs([("a", -1.0), ("B", -1.0)], ("A", "B")) == {"A": 0.0, "B": 1.0}


def test_openai_constrained_reads_top_logprobs(httpserver):
    seen = []

    def handler(request):
        from werkzeug import Response

        body = json.loads(request.get_data())
        seen.append(body)
        return Response(json.dumps(_completion([("B", math.log(0.7)), (" A", math.log(0.3))])),
                        content_type="application/json")

    httpserver.expect_request("/v1/chat/completions").respond_with_handler(handler)
    backend = load_backend("openai:m", base_url=httpserver.url_for("/v1"), max_retries=0)
    chats = [[{"role": "user", "content": "Q?\nA) x\nB) y"}]]
    probs = backend.answer_probabilities(chats, [("A", "B")])
    assert probs == [pytest.approx({"A": 0.3, "B": 0.7})]
    assert seen[0]["logprobs"] is True and seen[0]["top_logprobs"] == 20 and seen[0]["max_tokens"] == 1


def test_openai_constrained_without_logprobs_is_one_clear_error(httpserver):
    httpserver.expect_request("/v1/chat/completions").respond_with_json(_completion(None))
    backend = load_backend("openai:m", base_url=httpserver.url_for("/v1"), max_retries=0)
    with pytest.raises(UserError, match="returned no logprobs"):
        backend.answer_probabilities([[{"role": "user", "content": "Q?"}]], [("Yes", "No")])


def test_baselines_in_constrained_mode():
    chats = [[{"role": "user", "content": "Is it? Answer with Yes or No."}],
             [{"role": "user", "content": "Which?\nA) x\nB) y\nC) z"}]]
    choices = [("Yes", "No"), ("A", "B", "C")]
    assert load_backend("baseline:always-no").answer_probabilities(chats, choices) == [
        {"Yes": 0.0, "No": 1.0}, {"A": 1.0, "B": 0.0, "C": 0.0}]
    rnd = load_backend("baseline:random").answer_probabilities(chats, choices)
    assert all(sorted(p.values())[-1] == 1.0 for p in rnd)
    assert rnd == load_backend("baseline:random").answer_probabilities(chats, choices)
