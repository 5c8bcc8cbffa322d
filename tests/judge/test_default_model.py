"""The judge's default model is one the installed anthropic SDK knows, not one it deprecates, and the one
the README names as the default."""

from __future__ import annotations

import re
import typing

from anthropic._data import DEPRECATED_MODELS
from anthropic.types import Model
from conftest import ROOT

from passhat.judge._client import DEFAULT_MODEL


def known_models() -> set[str]:
    """`anthropic.types.Model` is `Literal[...] | str`: the literal's values are the SDK's model list."""
    return {value for arg in typing.get_args(Model) for value in typing.get_args(arg)}


def test_the_sdk_knows_the_default_model():
    assert known_models(), "anthropic.types.Model lists no model: read the SDK's model list another way"
    assert DEFAULT_MODEL in known_models(), sorted(known_models())


def test_the_default_model_is_not_deprecated():
    assert DEFAULT_MODEL not in DEPRECATED_MODELS, DEPRECATED_MODELS[DEFAULT_MODEL]


def test_the_readme_names_the_default():
    defaults = re.findall(r"model: (\S+) +# default", (ROOT / "README.md").read_text(encoding="utf-8"))
    assert defaults == [DEFAULT_MODEL]
