"""The LLM judge: grade retrieved chunks 0-3 through any litellm provider, never lose or double-pay.

Python API::

    from relgrade.io import read_run
    from relgrade.judge import JudgeConfig, judge_pairs, pool

    pairs = pool([read_run("run.jsonl")], depth=10)                 # list[Pair]
    result = judge_pairs(pairs, model="openai/gpt-4o-mini", prompt="graded",
                         store=".relgrade/judgments.sqlite",
                         config=JudgeConfig(concurrency=32, timeout=30, max_cost=2.0))
    result.qrels()          # {query_id: {doc_id: grade}} of the judged pairs
    result.unjudged         # Judgments without a grade (raw answer and reason kept)
    result.counts()         # pairs, judged, cached, unjudged, failed, remaining

- :func:`pool` takes the union of the top ``depth`` of every run; texts come from JSONL runs or
  ``corpus``/``queries`` mappings.
- :func:`judge_pairs` judges each pair on its own (pointwise), once per distinct (query, chunk
  text), through litellm (``openai/...``, ``anthropic/...``, ``ollama/...``, any OpenAI-compatible
  server with ``api_base``). Every answer is committed to the store the moment it arrives (a SQLite
  file, or ``postgresql://...`` shared by a team), keyed by (model, prompt hash, sampling params,
  query text, chunk text), so a re-run pays for nothing and a killed run pays again only for the
  calls that were in flight. Pairs are claimed (with a lease) before they are paid for, so several
  processes on one store split the work and pay nothing twice. Inside an event loop use
  ``await ajudge_pairs(...)``.
- :func:`judge_batch` sends the pairs not in the store to the provider's batch API (OpenAI Batch,
  Anthropic Message Batches) at about half price; the batch ids are in the store, so a killed run
  resumes polling. :func:`batch_status` lists the pending batches.
- :class:`JudgeSession` judges in many small batches sharing one store, budget and caller (the ragas
  metric scores sample by sample: ``max_cost``, ``concurrency``, ``rpm``, ``tpm`` hold for the whole metric).
- :func:`estimate` is the dry run: pairs, those already in the store, prompt tokens and dollars, paying nothing.
- :class:`JudgeConfig` holds retries, timeout, concurrency, temperature, samples, rate and cost
  limits. Only temperature, max_tokens and the sample index enter the store key.
- :func:`load_prompt` loads ``graded`` (0-3), ``binary`` (0-1), ``local`` or a prompt file; prompts
  are versioned by the sha256 of their content.
- :func:`parse_answer` and :func:`grade_distribution` read a grade and, from token logprobs,
  the distribution over the scale and its expected grade.

The default model, ``local/gemma3-270m``, runs offline in-process (``pip install
'relgrade[local]'``). It is a plumbing default with near-zero agreement with human labels: calibrate
it (``relgrade calibrate``) like any judge before trusting its grades.

The rooms, from the ground up: ``_config``, ``_pool``, ``_parse``, ``_prompt`` and ``_results`` (what a judge call
takes and returns); ``store/`` (rows, claims, the batch ledger, SQLite and PostgreSQL), ``local/`` (the embedded
model); ``transport/`` (one call, its retries, keys and prices); ``engine/`` (the judging loop, budget, session);
``_judge`` (:func:`judge_pairs`); ``batch/`` (``judge --batch``); ``_outputs`` (the files a run writes). The
command line is :mod:`relgrade.cli._judge`.
"""

from relgrade.judge._config import DEFAULT_MODEL, JudgeConfig
from relgrade.judge._judge import ajudge_pairs, estimate, judge_pairs
from relgrade.judge._parse import Parsed, expected_grade, grade_distribution, parse_answer
from relgrade.judge._pool import Pair, pool
from relgrade.judge._prompt import Prompt, delimit, load_prompt
from relgrade.judge._results import DryRun, JudgeResult, Judgment
from relgrade.judge.batch._run import ajudge_batch, batch_price_per_token, batch_status, judge_batch
from relgrade.judge.engine._session import JudgeSession
from relgrade.judge.store._store import DEFAULT_STORE, JudgmentStore, judgment_key

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_STORE",
    "DryRun",
    "JudgeConfig",
    "JudgeResult",
    "JudgeSession",
    "Judgment",
    "JudgmentStore",
    "Pair",
    "Parsed",
    "Prompt",
    "ajudge_batch",
    "ajudge_pairs",
    "batch_price_per_token",
    "batch_status",
    "delimit",
    "estimate",
    "expected_grade",
    "grade_distribution",
    "judge_batch",
    "judge_pairs",
    "judgment_key",
    "load_prompt",
    "parse_answer",
    "pool",
]
