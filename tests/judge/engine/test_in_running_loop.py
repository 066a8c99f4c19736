"""judge_pairs() inside a running event loop (a notebook cell) runs on a worker thread and still judges."""

from __future__ import annotations

import asyncio

from relgrade.judge import Pair, judge_pairs


def test_judge_pairs_works_where_a_loop_is_already_running(server, config, fake_key, tmp_path):
    pairs = [Pair("q1", f"d{g}", "which grade?", f"passage [[grade={g}]]") for g in range(4)]

    async def cell():  # what Jupyter does: user code runs while the kernel's loop is running
        return judge_pairs(pairs, model="openai/fake", api_base=server.base_url, api_key=fake_key,
                           store=tmp_path / "s.sqlite", config=config())

    result = asyncio.run(cell())
    assert {j.doc_id: j.grade for j in result.judgments} == {"d0": 0, "d1": 1, "d2": 2, "d3": 3}
    assert server.stats()["paid"] == 4
