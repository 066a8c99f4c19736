"""A ``strata`` sample whose weight column was emptied is calibrated unweighted *with a note saying so*, in the
printed report and its JSON, never silently (issue 24); with its weights it is weighted and no such note appears."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from relgrade.cli import main


def _filled(tmp_path, world, files, *, weights: bool) -> Path:
    sample = tmp_path / "strata.csv"
    assert main(["sample", "--judge", str(files["judge"]), "--design", "strata", "--n", "20", "--out", str(sample)]) == 0
    rows = list(csv.DictReader(sample.open()))
    assert rows and all(r["design"] == "strata" and float(r["weight"]) > 0 for r in rows)
    for r in rows:
        r["grade"] = str(world.grade(r["query_id"], r["doc_id"]))
        if not weights:
            r["weight"] = ""
    out = tmp_path / f"filled-{weights}.csv"
    with out.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return out


def test_empty_weights_are_said_and_full_weights_are_used(tmp_path, capsys, fuzz_world):
    world, files = fuzz_world, fuzz_world.write_world(tmp_path)
    for weights in (False, True):
        human = _filled(tmp_path, world, files, weights=weights)
        report = tmp_path / f"cal-{weights}.json"
        capsys.readouterr()
        assert main(["calibrate", "--judge", str(files["judge"]), "--human", str(human), "--n-boot", "20",
                     "--no-mapping", "--json", str(report)]) == 0
        out = capsys.readouterr().out
        notes = json.loads(report.read_text())["notes"]
        unweighted = [n for n in notes if "'weight' column is empty" in n]
        weighted = [n for n in notes if n.startswith("weighted by the pairs' inclusion weights")]
        if weights:
            assert not unweighted and weighted
        else:
            assert len(unweighted) == 1 and not weighted and "compared unweighted" in out
