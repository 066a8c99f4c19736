"""``relgrade check``: a golden set (and label files) against the corpus. Exit 0 ok, 1 problems, 2 bad input."""

from __future__ import annotations

import click


@click.command()
@click.option("--golden", "golden_path", required=True, help="Golden set JSONL (the guide's shape).")
@click.option("--corpus", "corpus_path", required=True, help="The corpus now: JSONL {doc_id, text} or TSV doc_id<TAB>text.")
@click.option("--labels", "label_paths", multiple=True,
              help="Also check a label file (human labels, label-page export, hybrid set) with text_sha256 (repeatable).")
@click.option("--json", "json_out", help="Write the findings and the corpus fingerprint as JSON here.")
@click.option("--stamp", "stamp_out",
              help="Write the golden set with the current text_sha256 of each relevant document that has none yet, so "
                   "the next check sees an edited document.")
@click.option("--show", type=click.IntRange(min=0), default=20, show_default=True, help="Problems listed per kind.")
def check(golden_path, corpus_path, label_paths, json_out, stamp_out, show):
    """Relevant or forbidden ids missing from the corpus, labels whose text changed, duplicate queries (exit 1)."""
    from relgrade.cli._evaluate import _write_json
    from relgrade.io import read_golden
    from relgrade.versioning import check_golden, stamp_golden

    from relgrade.io._outputs import check_outputs

    check_outputs({"--json": json_out}, {"--golden": golden_path, "--corpus": corpus_path, "--labels": label_paths})
    check_outputs({"--stamp": stamp_out, "--json": json_out}, {"--corpus": corpus_path, "--labels": label_paths})
    # (--stamp may rewrite --golden in place: that is what it is for)
    golden = read_golden(golden_path)
    result = check_golden(golden, corpus_path, labels=list(label_paths))
    for line in result.lines(show):
        click.echo(line)
    if json_out:
        _write_json(json_out, result.to_dict())
        click.echo(f"wrote {json_out}")
    if stamp_out:
        from relgrade._errors import InputError

        try:
            stamp_golden(golden, corpus_path).to_jsonl(stamp_out)
        except OSError as exc:
            raise InputError(f"cannot write ({exc.strerror}); choose another --stamp path", path=stamp_out) from None
        click.echo(f"wrote {stamp_out} (text hashes of the current corpus)")
    return 0 if result.ok else 1
