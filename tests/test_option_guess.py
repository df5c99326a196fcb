"""The model's guess of the option names a question asks for: read from its reply, matched to a unit's options."""

from __future__ import annotations

from agent.assembly.option_guess import GUESSED_NAMES, guess_features, parse_names


def test_a_reply_gives_its_names_once_each_without_an_echoed_label():
    assert parse_names("Names: -f, --force, --overwrite") == ["-f", "--force", "--overwrite"]
    assert parse_names("--keep, --keep, --KEEP") == ["--keep"]
    assert parse_names("`--sort=time`, -t (by time)\nQuestion: another") == ["--sort=time", "-t"]
    assert parse_names("") == [] and parse_names("   \n") == []
    assert len(parse_names(", ".join(f"--opt{n}" for n in range(20)))) == GUESSED_NAMES


def test_a_units_options_match_a_guess_exactly_or_in_part():
    row = "`-f, --force` — Force overwrite of output file."
    assert guess_features(row, ["--force"]) == (1.0, 0.0, 1.0)
    assert guess_features(row, ["-f"]) == (0.0, 1.0, 0.0)  # a letter, weighed apart; no words to share
    assert guess_features("`--ignore-check` — Don't verify the integrity check.", ["--check"]) == (0.0, 0.0, 0.5)
    assert guess_features("`--keep` — Keep input files.", ["--keep-files"])[2] == 0.5
    assert guess_features("Use --force to overwrite the files it would refuse.", ["--force"])[0] == 1.0
    assert guess_features("The output file is replaced when it exists.", ["--force"]) == (0.0, 0.0, 0.0)
    assert guess_features(row, []) == (0.0, 0.0, 0.0)
