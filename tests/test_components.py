"""The rule for tests whose real component is missing: skipped locally, failed under CI."""

from __future__ import annotations

import pytest

from components import INSTALL, MISSING, missing


def test_missing_component_skips_locally_with_the_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception) as info:
        missing("postgresql", "no server binaries")
    line = str(info.value)
    assert line.startswith(MISSING) and INSTALL["postgresql"] in line and "\n" not in line


def test_missing_component_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="chromium"):
        missing("chromium", "no browser")
