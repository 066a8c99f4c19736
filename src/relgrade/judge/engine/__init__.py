"""How judging runs: the pointwise, deduplicated, resumable engine (``_engine``) within a budget (``_budget``); a
session of many small pieces sharing one store, budget and caller (``_session``); an event loop of its own
(``_sync``); progress lines (``_progress``) and the dry run's wall time (``_walltime``).
"""
