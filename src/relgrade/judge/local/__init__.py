"""The embedded local judge: a small GGUF base model run in-process by llama.cpp (``_model``: loading and the grade
distribution of the next token), behind litellm as the provider ``local`` (``_provider``, one floor up).
"""
