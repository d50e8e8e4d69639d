"""Packaging metadata that setuptools accepts without deprecation warnings."""

import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_license_is_an_spdx_string_and_setuptools_supports_it():
    meta = tomllib.loads(PYPROJECT.read_text())
    # a TOML table ({text = ...}) makes setuptools >= 77 warn on every install
    assert meta["project"]["license"] == "Apache-2.0"
    assert not any(c.startswith("License ::") for c in meta["project"].get("classifiers", []))
    requires = [r for r in meta["build-system"]["requires"] if r.startswith("setuptools")]
    assert requires == ["setuptools>=77"]  # the first release that reads SPDX license strings
