"""Judging on a cluster: ``relgrade judge --engine ray`` (:func:`judge_pairs_ray`, online calls from a Ray actor pool
sharing a PostgreSQL store) and ``--engine ray-vllm`` (:func:`judge_pairs_vllm`, an open model served by vLLM on the
cluster's GPUs through ``ray.data.llm``). Ray is imported only when one of them runs (``pip install 'relgrade[ray]'``).
"""

from relgrade.judge.cluster._run import RAY_MISSING, judge_pairs_ray
from relgrade.judge.cluster._vllm import judge_pairs_vllm

__all__ = ["RAY_MISSING", "judge_pairs_ray", "judge_pairs_vllm"]
