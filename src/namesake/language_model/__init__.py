"""The local language model (SmolLM2-135M): how much likelier a sentence reads with a rewrite than without it.

`load_language_model` / `build_language_model` give the process's `LocalLanguageModel`; `llama` is the numpy forward
pass, `compiled` the OpenVINO one, `weights` reads the GGUF file."""

from typing import TYPE_CHECKING

from namesake.core import lazy_names

if TYPE_CHECKING:
    from namesake.language_model.local import LocalLanguageModel, build_language_model, model_file, warm_read

__all__ = [
    "LocalLanguageModel",
    "build_language_model",
    "model_file",
    "warm_read",
]
__getattr__ = lazy_names(__name__, __file__)
