"""``framebench build robotics``: procedural PARTNR-style episodes (issue: embodied)."""

from pathlib import Path

import typer

from framebench.bounds import EPISODES, option


def robotics(
    out: Path = typer.Option(..., "--out", help="Output folder for episodes.json.gz."),
    n: int = option(EPISODES, 162, help="Number of episodes."),
    seed: int = typer.Option(0, "--seed", help="Random seed."),
) -> None:
    """Generate PARTNR-format household episodes with framing purposes."""
    from framebench.paths import check_out_folder

    check_out_folder(out)  # before generating
    from rich.progress import Progress

    from framebench.embodied.episodes import write_episodes
    from framebench.embodied.generator import generate

    with Progress() as bar:
        task = bar.add_task("episodes", total=n)
        episodes = generate(n, seed, progress=lambda: bar.advance(task))
    path = write_episodes(episodes, Path(out) / "episodes.json.gz")
    typer.echo(f"wrote {len(episodes)} episodes to {path}")
