"""The ``relgrade`` command line: thin, lazy, and exit code 2 with one line for every user error.

Subcommands live in their own modules and are imported only when invoked, so ``relgrade --help``
never imports numpy, pandas, litellm or llama_cpp.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

import click

from relgrade._errors import InputError

# name -> (module, attribute, one-line help). A module that is not installed is simply not listed.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "evaluate": ("relgrade.cli._evaluate", "evaluate", "Score a run against qrels or a golden set (recall@k, MRR, nDCG)."),
    "compare": ("relgrade.cli._evaluate", "compare", "Compare two runs per metric with a paired test over queries."),
    "gate": ("relgrade.cli._gate", "gate", "CI gate: fail when a metric drops beyond --max-drop or any leak appears."),
    "ann-recall": ("relgrade.cli._ann", "ann_recall", "An ANN run against exact search: neighbour recall@k with its CI."),
    "check": ("relgrade.cli._check", "check", "A golden set against the corpus: deleted or changed documents, duplicate queries."),
    "history": ("relgrade.cli._history", "history", "Reports of successive builds over time: a table and a trend page."),
    "judge": ("relgrade.cli._judge", "judge", "Grade retrieved chunks 0-3 with an LLM judge."),
    "calibrate": ("relgrade.cli._calibrate", "calibrate", "Agreement of judge labels with human labels, with CIs."),
    "audit": ("relgrade.cli._audit", "audit", "Probe the judge for biases (length, keywords, ...) on a sample of your pairs."),
    "sample": ("relgrade.cli._calibrate", "sample", "Choose the pairs humans should label next."),
    "label": ("relgrade.cli._label", "label", "Serve a local page where humans grade pairs."),
    "estimate": ("relgrade.cli._hybrid", "estimate", "Prediction-powered metric estimates from human + judge labels."),
    "hybrid": ("relgrade.cli._hybrid", "hybrid", "Merge human and judge labels into a hybrid label set with provenance."),
    "rank-systems": ("relgrade.cli._hybrid", "rank_systems", "Rank several runs under human, judge and hybrid labels."),
    "demo": ("relgrade.cli._demo", "demo", "Run the whole pipeline offline on bundled data."),
}


def _exists(module: str) -> bool:
    """Whether ``relgrade.<...>`` ships, read from the package folder: ``importlib.util.find_spec`` of a
    submodule would import its parent packages (``relgrade.calibration`` imports numpy and pandas)."""
    parts = module.split(".")
    if parts[0] != "relgrade":
        return importlib.util.find_spec(module) is not None
    base = Path(__file__).resolve().parent.parent.joinpath(*parts[1:])
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return [name for name, (module, _, _) in COMMANDS.items() if _exists(module)]

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, attr, _ = COMMANDS[name]
        try:
            return getattr(importlib.import_module(module), attr)
        except ModuleNotFoundError as exc:
            if exc.name and module.startswith(exc.name):
                return None
            raise

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="relgrade", prog_name="relgrade")
def cli() -> None:
    """relgrade: evaluate retrieval with trec_eval-exact metrics, calibrated LLM judges and hybrid labels."""


def _masked(text: str) -> str:
    """An error line with every piece of every key of the environment masked (the last net under the library's own
    masking: a key given where a number or a name goes is quoted back by the error that refuses it)."""
    from relgrade._redact import known_secrets, mask_pieces

    return mask_pieces(text, known_secrets())


def main(argv: list[str] | None = None) -> int:
    """Entry point. User errors print one line to stderr and exit 2; no traceback. A closed stdout (``| head``) drops
    the rest of the output and the command still ends, files written (:func:`relgrade.cli._output.closed_stdout_ends_quietly`)."""
    from relgrade.cli._output import closed_stdout_ends_quietly

    with closed_stdout_ends_quietly():
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    try:
        rv = cli.main(args=argv, prog_name="relgrade", standalone_mode=False)
    except InputError as exc:
        click.echo(_masked(f"relgrade: error: {exc}"), err=True)
        return 2
    except click.exceptions.Abort:
        click.echo("relgrade: interrupted; everything finished so far is kept", err=True)
        return 130
    except click.ClickException as exc:
        import io

        shown = io.StringIO()
        exc.show(file=shown)  # a usage error quotes the value given: a key passed to the wrong option
        click.echo(_masked(shown.getvalue().rstrip("\n")), err=True)
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except KeyboardInterrupt:
        click.echo("relgrade: interrupted; everything finished so far is kept", err=True)
        return 130
    except BrokenPipeError:
        return 0
    # A command may return its exit code (the gate returns 1 on a regression).
    return rv if isinstance(rv, int) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
