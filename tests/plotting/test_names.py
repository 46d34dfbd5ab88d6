"""Plot names: known keys read as the papers' words, unknown keys are shown as they are."""

from __future__ import annotations

from privrepro.plotting.names import MATH, NAMES, display


def test_display_names_known_keys_and_passes_unknown_ones_through() -> None:
    assert display("cl_method", "peft_film") == "PEFT Ensemble (FiLM)"
    assert display("pac_method", "pac_theorem3_exact").startswith("PAC, Theorem 3")
    assert display("cl_method", "new_method") == "new_method"
    assert display("no such kind", 8.0) == "8.0"


def test_names_are_distinct_within_each_kind_except_declared_aliases() -> None:
    aliases = {
        ("label_config", MATH["S_prior^const"]),
        ("pac_method", "PAC, Algorithm 1 as stated"),
    }
    for kind, names in NAMES.items():
        seen: dict[str, str] = {}
        for key, name in names.items():
            if name in seen:
                assert any(kind == k and name.startswith(a) for k, a in aliases), (kind, key)
            seen[name] = key
