"""The option texts and option groups that several commands share: one wording for each option, wherever it appears."""

from __future__ import annotations

import click

from relgrade._defaults import DEFAULT_FOLDS
from relgrade._intervals import MEAN_CI

K_HELP = "Cutoff of the default metrics (repeatable; default 5 and 10). With --metric, put the cutoff in the name."
CORPUS_HELP = ("The corpus the run searched (JSONL or TSV): its fingerprint is recorded in the report (gate refuses "
               "two reports over different corpora) and the labels are checked against it (relgrade check).")
METRIC_HELP = ("Metric to compute (repeatable or comma-separated): recall@k, precision@k, mrr, mrr@k, ndcg@k, ndcg, "
               "frac_recall@k. Default: recall, precision, ndcg at each --k, and mrr.")
CHUNKS_HELP = "Chunk texts for TREC runs: JSONL (doc_id, text) or TSV doc_id<TAB>text."
QUERIES_HELP = "Query texts for TREC runs: TSV qid<TAB>query or JSONL (query_id, query)."
HUMAN_HELP = "Human labels: TREC qrels, or CSV/JSONL query_id,doc_id,grade[,annotator,time,text] (relgrade label export)."
JUDGE_HELP = "Judge labels: the OUT.details.jsonl of 'relgrade judge', or plain qrels."
JUDGES_HELP = JUDGE_HELP + " Repeat for several judges, calibrated together (--prediction soft)."
PREDICTION_HELP = ("How the judges predict each query's metric: soft = the expectation under each pair's human-grade "
                   "probabilities given the judges' grades, cross-fitted on the human labels (several judges at once), "
                   "averaged half and half with the metric on the judges' own grades; hard = the metric on one "
                   "judge's grades.")
FOLDS_HELP = (f"Folds of the soft prediction's cross-fit over the human-labeled queries (2 to their number). "
              f"Default: {DEFAULT_FOLDS}, or one per labeled query when fewer.")
MAPPING_HELP = ("The judge's calibration: the JSON of 'relgrade calibrate --json' (its verdict then travels with the "
                "labels and reports; with --prediction hard its grade mapping is applied when calibration adopted it), "
                "or a bare mapping {\"adopted\": true, \"table\": {\"0\": 0, ...}} (the judge then counts as not "
                "calibrated).")
AUDIT_HELP = ("The judge's audit: the JSON of 'relgrade audit --json' (what it found travels with the report; a bias is "
              "printed, and so by 'relgrade gate', which warns on it and does not fail). Default: the audit a --mapping "
              "made by 'calibrate --audit' carries, if any.")


def metric_options(f):
    """--k, --metric, --rel-threshold, --no-answer, --n-boot, --seed: the options of every command that scores runs."""
    from relgrade.metrics._settings import DEFAULT_N_BOOT, DEFAULT_NO_ANSWER, NO_ANSWER_HELP, NO_ANSWER_MODES

    options = [
        click.option("--k", "ks", type=int, multiple=True, help=K_HELP),
        click.option("--metric", "metrics", multiple=True, help=METRIC_HELP),
        click.option("--rel-threshold", type=int, default=1, show_default=True,
                     help="A doc is relevant when its grade is at least this (trec_eval -l)."),
        click.option("--no-answer", type=click.Choice(NO_ANSWER_MODES), default=DEFAULT_NO_ANSWER, show_default=True,
                     help=NO_ANSWER_HELP),
        click.option("--n-boot", type=int, default=DEFAULT_N_BOOT, show_default=True,
                     help=f"Bootstrap resamples (>= 1) of the commands that bootstrap; evaluate's and compare's 95% CIs "
                          f"are {MEAN_CI} intervals and do not depend on it."),
        click.option("--seed", type=int, default=0, show_default=True, help="Seed of the randomisation test."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def with_judge(text: str) -> str:
    """An option's shared text, said of ``compare`` where the option only counts with --judge."""
    return "With --judge: " + text[0].lower() + text[1:]
