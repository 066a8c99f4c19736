"""``judge --batch``: the pairs not in the store go to a provider's batch API at about half price. ``_run`` is the
resumable loop (submit, poll, collect, resubmit); ``_api`` the adapter interface and its HTTP client, with one
adapter per provider (``_openai``, ``_anthropic``) picked in ``_run``; ``_checks`` reads a provider's answers
before anything is stored; ``_collect`` stores an ended batch's lines; ``_options`` the defaults and limits.
"""
