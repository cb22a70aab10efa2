"""The local language model (SmolLM2-135M): how much likelier a sentence reads with a rewrite than without it.

`load_language_model` / `build_language_model` give the process's `LocalLanguageModel`; `llama` is the numpy forward
pass, `compiled` the OpenVINO one, `weights` reads the GGUF file."""
