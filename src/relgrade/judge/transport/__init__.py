"""How a judge call reaches a model: one call with its retries, rate limits and cost (``_call``), through litellm or
the lean OpenAI-compatible client (``_http``), over one server or a fleet (``_endpoints``); which errors are
retried and which stop the run (``_classify``); the first probe before any paid call (``_preflight``); API keys
kept out of every message (``_secrets``); prices and token counts read without importing litellm (``_prices``).
"""
