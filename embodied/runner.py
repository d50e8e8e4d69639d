"""The embodied runner: every episode in its 7 framings through a planner and the symbolic simulator.

Per framing: reset the env, frame the instruction (Appendix D.4), then loop planner decision ->
strict parse -> ``env.step`` (one skill) -> result, until the planner says ``Done[]``, the replan cap
is reached (LLM planners; PARTNR's ``replanning_threshold``: the call numbered cap+1 ends the episode
without acting), or the env truncates at 20,000 sim steps. Each finished framing is stored in the
result store, so an interrupted run resumes.

``replans`` (one definition for the records, the report and the README) is PARTNR's
``replanning_count``: the number of LLM planner calls a framing made, the first call and the final
``Done[]`` call included. With replan cap T (PARTNR's ``replanning_threshold``) a framing makes at
most T + 1 calls, so ``replans <= T + 1``. Oracle and script planners make no LLM calls; their
records hold ``replans = null`` (shown as n/a), never their action count.

Under ``--partnr-compat`` a framing also ends where PARTNR's evaluator would raise (quirk 3: the env
terminates); it is recorded as PARTNR ingest records a crashed episode (percent complete 0, output
``[crashed] ...``). run.json names the evaluation mode (``evaluation``) and counts such framings
(``evaluation_errors``) and the framings run (``n_framings``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from framebench.embodied.env import MAX_SIM_STEPS, SymbolicPartnrEnv
from framebench.embodied.episodes import read_episodes
from framebench.embodied.evaluation import evaluation_mode
from framebench.embodied.framing import FRAMINGS, frame_instruction, framing_suffix
from framebench.embodied.planners import Decision, Planner
from framebench.embodied.skills import parse_action
from framebench.executors.base import WorkerMeta
from framebench.run_folder import EPISODE_LOGS

if TYPE_CHECKING:
    from framebench.pipeline.driver import Rows, Selected

DEFAULT_REPLAN_CAP = 25
EVALUATION_ERROR = "evaluation_error"  # end reason: PARTNR's evaluator would have raised (compat mode)


def item_id(episode_id: str, bias: str, level: str) -> str:
    return f"{episode_id}__{framing_suffix(bias, level)}"


def _changes(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    diff: dict[str, Any] = {}
    for section in ("agent", "objects", "open"):
        for key, value in after[section].items():
            if before[section].get(key) != value:
                diff.setdefault(section, {})[key] = value
    if before["next_to"] != after["next_to"]:
        diff["next_to"] = after["next_to"]
    return diff


class _Framing:
    """One framing of an episode in flight: its env, planner session and log."""

    def __init__(self, episode, bias, level, planner, partnr_compat, max_sim_steps):
        self.bias, self.level = bias, level
        self.instruction = frame_instruction(episode["instruction"], episode["info"]["purposes"], bias, level)
        self.env = SymbolicPartnrEnv([episode], partnr_compat=partnr_compat, max_sim_steps=max_sim_steps)
        world_text, info = self.env.reset(options={"episode": episode})
        self.session = planner.open(episode, self.instruction, world_text)
        if getattr(planner, "needs_env", False):  # choice planners read the state for their candidates
            self.session["env"] = self.env
        self.steps: list[dict[str, Any]] = []
        self.result: str | None = None
        self.replans, self.output, self.end = 0, "", ""
        self.sim_steps = info["sim_steps"]
        if info["evaluation_error"] is not None:  # compat: PARTNR's evaluator raised on the first state
            self.end = EVALUATION_ERROR

    def apply(self, decision: Decision, uses_cap: bool, replan_cap: int) -> None:
        """Log one planner decision and act on it through ``env.step``; ``end`` is set when the
        framing ends (``done``, ``replan_cap``, ``evaluation_error``, ``sim_step_limit``)."""
        self.replans += 1
        self.output = decision.text
        action = parse_action(decision.text)
        entry: dict[str, Any] = {"decision": self.replans, "prompt": decision.prompt, "response": decision.text,
                                 **(decision.log or {})}
        self.steps.append(entry)
        if not isinstance(action, str) and action.tool == "Done":
            self.env.step(decision.text)  # terminates: records PARTNR's final state
            entry["action"], self.end = "Done[]", "done"
            return
        if uses_cap and self.replans > replan_cap:  # the call past the cap does not act
            entry["action"], self.end = None, "replan_cap"
            return
        before = self.env.world.snapshot()
        _, _, terminated, truncated, info = self.env.step(decision.text)
        self.result = info["response"]  # a skill's result, or why the text is not an action
        entry["action"] = None if isinstance(action, str) else f"{action.tool}[{action.args}]"
        entry.update(result=self.result, sim_steps=info["sim_steps"] - self.sim_steps,
                     state_change=_changes(before, self.env.world.snapshot()))
        self.sim_steps = info["sim_steps"]
        if terminated:  # not Done: PARTNR's evaluator would have raised (compat)
            self.end = EVALUATION_ERROR
        elif truncated:
            self.end = "sim_step_limit"

    def finish(self, episode: dict[str, Any], planner: Planner) -> tuple[dict[str, Any], dict[str, Any]]:
        self.env.finish()
        metrics = self.env.metrics()
        error = metrics["evaluation_error"]
        # as a crashed PARTNR episode is ingested: scores 0, output starts with [crashed]
        output = self.output if error is None else f"[crashed] {error}\n{self.output}".rstrip("\n")
        fields = {"percent_complete": float(metrics["percent_complete"]), "success": bool(metrics["success"]),
                  "sim_steps": int(metrics["sim_steps"]), "replans": self.replans, "output": output,
                  "end": self.end, "evaluation_error": error}
        log = {"episode_id": episode["episode_id"], "bias": self.bias, "level": self.level,
               "instruction": self.instruction, "planner": planner.spec, "steps": self.steps, "end": self.end,
               "metrics": fields, "evaluation": self.env.tracker.log()}
        return fields, log


def run_framings(episode: dict[str, Any], framings: list[tuple[str, str]], planner: Planner,
                 replan_cap: int = DEFAULT_REPLAN_CAP, partnr_compat: bool = False,
                 max_sim_steps: int = MAX_SIM_STEPS,
                 on_round: Callable[[int, int], None] | None = None) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Run framings (bias, level) of one episode in lockstep (one batched planner call per round);
    return (result fields, full log) per framing.

    ``on_round(decisions, finished)`` fires after every round: the planner decisions it made and
    the framings that ended in it (for live progress)."""
    runs = [_Framing(episode, b, lv, planner, partnr_compat, max_sim_steps) for b, lv in framings]
    active = [r for r in runs if not r.end]
    if on_round is not None and len(active) < len(runs):  # ended on the first state (compat error)
        on_round(0, len(runs) - len(active))
    while active:
        decisions = planner.decide([r.session for r in active], [r.result for r in active],
                                   [r.env.world.describe_objects() for r in active])
        for run_, decision in zip(active, decisions, strict=True):
            run_.apply(Decision(*decision), planner.uses_cap, replan_cap)
        still = [r for r in active if not r.end]
        if on_round is not None:
            on_round(len(active), len(active) - len(still))
        active = still
    return [r.finish(episode, planner) for r in runs]


def run_framing(episode: dict[str, Any], bias: str, level: str, planner: Planner,
                replan_cap: int = DEFAULT_REPLAN_CAP, partnr_compat: bool = False,
                max_sim_steps: int = MAX_SIM_STEPS) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run one framing of an episode; return (result fields, full log)."""
    return run_framings(episode, [(bias, level)], planner, replan_cap, partnr_compat, max_sim_steps)[0]


def run_settings(planner: Planner, replan_cap: int, partnr_compat: bool) -> dict[str, Any]:
    """Everything besides the planner fingerprint that determines a framing's result (part of its key)."""
    return {"replan_cap": replan_cap, "partnr_compat": partnr_compat, "simulator": "symbolic",
            **planner.settings()}


def episode_keys(episode: dict[str, Any], fingerprint: str,
                 settings: dict[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    """Per framing's item id: (store key, framed instruction).

    The key is ``result_key(fingerprint, iid, {"instruction": framed, "episode": episode}, settings)``;
    the episode's JSON (the bulk of that prompt) is serialised once for all 7 framings."""
    from framebench.store import key_from_prompt_hash, sha256, stable_json

    keys, framed = {}, {}
    episode_json = stable_json(episode)
    for bias, level in FRAMINGS:
        iid = item_id(episode["episode_id"], bias, level)
        framed[iid] = frame_instruction(episode["instruction"], episode["info"]["purposes"], bias, level)
        prompt_json = f'{{"episode":{episode_json},"instruction":{stable_json(framed[iid])}}}'
        keys[iid] = key_from_prompt_hash(fingerprint, iid, sha256(prompt_json), settings)
    return keys, framed


# Work per episode (7 framings in the symbolic simulator, one CPU) of the planners known to be
# cheap, measured with bench/scale_bench.py: their units pack several episodes; any other planner's
# units hold one episode each (``framebench.executors.packing``).
EPISODE_SECONDS = {"oracle": 0.012, "script": 0.012}


class EpisodeWorker:
    """An embodied worker: the planner (built here from its spec, or the one the caller built) runs
    units of episodes; each episode's framings come back as one chunk (records and logs)."""

    def __init__(self, planner: Planner | str, max_new_tokens: int, model_args: dict[str, Any] | None,
                 replan_cap: int, partnr_compat: bool, live: bool = True):
        """``live``: report every planner decision round (locally; on Ray only model planners'
        rounds, which take seconds, are worth a message each)."""
        self.planner, self.max_new_tokens, self.model_args = planner, max_new_tokens, model_args
        self.replan_cap, self.partnr_compat, self.live = replan_cap, partnr_compat, live

    def meta(self) -> WorkerMeta:
        if isinstance(self.planner, str):
            from framebench.embodied.planners import load_planner

            self.planner = load_planner(self.planner, max_new_tokens=self.max_new_tokens,
                                        model_args=self.model_args)
        planner = self.planner
        return WorkerMeta(planner.spec, planner.fingerprint(),
                          settings=run_settings(planner, self.replan_cap, self.partnr_compat), uses_cap=planner.uses_cap)

    def run(self, unit: Any):
        """``unit.payload``: [(episode, {item id: store key} of the framings to run)]."""
        from framebench.executors import Chunk, streamed

        live = self.live or self.planner.uses_cap

        def work(emit: Callable[[Any], None]) -> None:
            for episode, keys in unit.payload:
                decisions = 0

                def on_round(made: int, finished: int) -> None:
                    nonlocal decisions
                    decisions += made
                    if live:
                        emit(Chunk(unit.index, counts={"planner decisions": made}))

                pending = [(b, lv) for b, lv in FRAMINGS if item_id(episode["episode_id"], b, lv) in keys]
                results = run_framings(episode, pending, self.planner, self.replan_cap, self.partnr_compat,
                                       on_round=on_round)
                chunk = Chunk(unit.index, done=len(pending))
                for (bias, level), (fields, log) in zip(pending, results, strict=True):
                    iid = item_id(episode["episode_id"], bias, level)
                    chunk.entries.append((keys[iid], iid, fields))
                    chunk.files[f"{EPISODE_LOGS}/{iid}.json"] = log
                if not live:
                    chunk.counts = {"planner decisions": decisions}
                emit(chunk)

        yield from streamed(work)


def run(planner: Planner | str, episodes_file: Path, out: Path, replan_cap: int = DEFAULT_REPLAN_CAP,
        partnr_compat: bool = False, progress: bool = True, limit: int | None = None,
        parsed: list[dict[str, Any]] | None = None, *, max_new_tokens: int = 64,
        model_args: dict[str, Any] | None = None, executor: str = "local", ray_address: str | None = None,
        ray_workers: int | None = None, episodes_per_unit: int | None = None, force: bool = False) -> Path:
    """Run every episode x framing; write records, per-framing logs, run.json and prompts.jsonl.
    ``planner``: a built planner (local runs) or a planner spec (built by each worker, on any
    executor). ``parsed``: the episode file's episodes when the caller has already read them.
    ``episodes_per_unit``: unit size (default: by the planner's cost, see ``EPISODE_SECONDS``)."""
    from framebench.pipeline.driver import Execution, drive

    front = EpisodeRun(planner, Path(episodes_file), Path(out), replan_cap, partnr_compat, limit, parsed,
                       max_new_tokens, model_args, executor == "local", episodes_per_unit)
    drive(front, Execution(executor, ray_address, ray_workers, progress, force))
    return Path(out)


def episode_rows(episodes: list[dict[str, Any]], results: dict[str, dict[str, Any]], run_id: str, spec: str,
                 uses_cap: bool) -> list[dict[str, Any]]:
    """Each framing's result fields as its record, in records order (episodes x ``FRAMINGS``)."""
    from framebench.embodied.suite import episode_row

    rows = []
    for episode in episodes:
        for bias, level in FRAMINGS:
            iid = item_id(episode["episode_id"], bias, level)
            fields = results[iid]
            rows.append(episode_row(
                run_id=run_id, model=spec, episode_id=episode["episode_id"], item_id=iid,
                bias=bias, level=level, constraint=episode["info"]["constraint_type"],
                percent_complete=fields["percent_complete"], success=bool(fields["success"]),
                sim_steps=fields["sim_steps"], output=fields["output"],
                replans=fields["replans"] if uses_cap else None))
    return rows


@dataclass
class EpisodeRun:
    """The symbolic simulator's front end of the driver: episodes x framings, units of episodes,
    records and episode logs."""

    planner: Planner | str
    episodes_file: Path
    out: Path
    replan_cap: int
    partnr_compat: bool
    limit: int | None
    parsed: list[dict[str, Any]] | None
    max_new_tokens: int
    model_args: dict[str, Any] | None
    local: bool
    episodes_per_unit: int | None
    producer: str = "embodied"
    simulator: str = "symbolic"

    def select(self) -> Selected:
        from framebench.files import file_sha256
        from framebench.pipeline.driver import Selected
        from framebench.run_folder import RunIdentity

        every = read_episodes(self.episodes_file) if self.parsed is None else self.parsed
        self.episodes = every[:self.limit]
        self.spec = self.planner if isinstance(self.planner, str) else self.planner.spec
        if not self.local and not isinstance(self.planner, str):
            raise TypeError("a Ray run builds the planner on each worker: pass its spec")
        selection = {"replan_cap": self.replan_cap, "partnr_compat": self.partnr_compat, "limit": self.limit,
                     "max_new_tokens": self.max_new_tokens}
        # the id hashes the limit; the other settings enter it with the planner's (``run_settings``)
        identity = RunIdentity(self.spec, file_sha256(self.episodes_file), selection,
                               hashed_selection={"limit": self.limit})
        warnings = () if len(self.episodes) == len(every) else (
            f"--limit {self.limit}: running {len(self.episodes)} of {len(every)} episodes; these metrics are not "
            "the benchmark's (use --limit for smoke tests only)",)
        return Selected(identity, warnings)

    def recipe(self) -> Any:
        from framebench.executors import Recipe
        from framebench.executors.resources import engine_device

        device = engine_device(self.spec, ("planner", "model")) if isinstance(self.planner, str) else "cpu"
        return Recipe(EpisodeWorker, (self.planner, self.max_new_tokens, self.model_args, self.replan_cap,
                                      self.partnr_compat, self.local),
                      device=device, label=f"{self.spec} episode framings")

    def keys(self, meta: WorkerMeta) -> list[str]:
        self.keyed = [episode_keys(episode, meta.fingerprint, meta.settings) for episode in self.episodes]
        return [key for ep_keys, _ in self.keyed for key in ep_keys.values()]

    def plan(self, meta: WorkerMeta, stored: Mapping[str, Any], lookup: Any, workers: int) -> Any:
        """Plan the episodes' framings ``stored`` lacks as units."""
        from framebench.executors import Unit
        from framebench.executors.packing import pack, pack_size
        from framebench.pipeline.driver import UnitPlan

        (self.out / EPISODE_LOGS).mkdir(exist_ok=True)
        episodes, keys = self.episodes, [k for k, _ in self.keyed]
        index_of = {id(episode): i for i, episode in enumerate(episodes)}
        self.decisions = 0

        def todo(indices: range | list[int]) -> list[tuple[dict[str, Any], dict[str, str]]]:
            work = []
            for i in indices:
                missing = {iid: k for iid, k in keys[i].items() if k not in stored}
                if missing:
                    work.append((episodes[i], missing))
            return work

        def unit(index: int, payload: list[tuple[dict[str, Any], dict[str, str]]]) -> Unit:
            return Unit(index, sum(len(m) for _, m in payload), payload)

        def remaining(left: Unit) -> Unit | None:
            payload = todo([index_of[id(episode)] for episode, _ in left.payload])
            return unit(left.index, payload) if payload else None

        atoms = [i for i in range(len(episodes)) if todo([i])]
        size = self.episodes_per_unit or pack_size(len(atoms), workers,
                                                   EPISODE_SECONDS.get(meta.spec.partition(":")[0]))
        units = [unit(n, todo([atoms[i] for i in span])) for n, span in enumerate(pack(len(atoms), size))]
        return UnitPlan(units, f"{meta.spec} episode framings", len(episodes) * len(FRAMINGS), served=len(stored),
                    unit="framings", fields={"planner decisions": 0}, remaining=remaining)

    def take(self, chunk: Any) -> tuple[int, dict[str, Any]]:
        self.decisions += chunk.counts.get("planner decisions", 0)
        return chunk.done, {"planner decisions": self.decisions}

    def rows(self, meta: WorkerMeta, run_id: str, stored: Mapping[str, Any]) -> Rows:
        """Results -> records, in records order."""
        from framebench.pipeline.driver import Rows

        results = {iid: stored[key] for ep_keys, _ in self.keyed for iid, key in ep_keys.items()}
        rows = episode_rows(self.episodes, results, run_id, meta.spec, meta.uses_cap)
        errors = sum(results[r["item_id"]].get("evaluation_error") is not None for r in rows)
        prompts = [p for _, framed in self.keyed for p in framed.items()]
        return Rows(rows, prompts, meta.settings, {
            "suite": "embodied", "n_episodes": len(self.episodes), "n_framings": len(rows),
            "evaluation": evaluation_mode(meta.settings["partnr_compat"]), "evaluation_errors": errors,
            "note": "sim_steps come from the symbolic cost model; not comparable to Habitat's"})

    def close(self) -> None:
        """Nothing to release."""
