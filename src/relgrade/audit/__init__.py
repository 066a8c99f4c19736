"""Know your judge: an audit of its biases before its labels count (issue 37).

LLM relevance judges overrate, and react to a passage's length and to the query's keywords rather than to what
the passage says; calibration against humans sees only the average agreement on a few labeled queries. An audit
perturbs a random sample of the user's own pairs in controlled ways and has the same judge grade each perturbed
passage beside the original (:mod:`relgrade.audit._probes`), then tests every probe's mean grade shift
(:mod:`relgrade.audit._stats`)::

    from relgrade.io import read_run
    from relgrade.judge import pool
    from relgrade.audit import design_audit, price_audit, run_audit

    design = design_audit(pool([read_run("run.jsonl")]), n=200, seed=0)
    price_audit(design, model="openai/gpt-4o-mini")           # the dry run: calls and dollars per probe
    report = run_audit(design, model="openai/gpt-4o-mini", system_models=["openai/gpt-4o"])
    report.biases          # ("length",): the probes whose shift is a bias
    report.to_dict()       # what 'relgrade audit --json' writes; its verdict travels with estimate --audit

The rooms: ``_probes`` (the sample and the perturbations), ``_stats`` (shifts, intervals, verdicts), ``_family``
(circularity), ``_run`` (through the judge), ``_report`` (what comes back). The command line is
:mod:`relgrade.cli._audit`; the verdict that travels with reports is :class:`relgrade._verdict.AuditVerdict`.
"""

from relgrade.audit._family import Circularity, circularity, family
from relgrade.audit._probes import DEFAULT_N, PROBES, Design, Probe, design_audit, perturb
from relgrade.audit._report import AuditPlan, AuditReport
from relgrade.audit._run import price_audit, run_audit
from relgrade.audit._stats import DEFAULT_MIN_SHIFT, ProbeResult, analyse

__all__ = [
    "AuditPlan",
    "AuditReport",
    "Circularity",
    "DEFAULT_MIN_SHIFT",
    "DEFAULT_N",
    "Design",
    "PROBES",
    "Probe",
    "ProbeResult",
    "analyse",
    "circularity",
    "design_audit",
    "family",
    "perturb",
    "price_audit",
    "run_audit",
]
