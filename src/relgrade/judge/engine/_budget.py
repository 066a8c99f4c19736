"""The spending limit of a run (``--max-cost``): reserve the worst case of a call before sending it,
settle with the real cost when the answer arrives, stop when the next call could pass the limit."""

from __future__ import annotations

from relgrade._errors import InputError
from relgrade.judge.transport._call import Answer, price_per_token

__all__ = ["Budget", "Stop"]


class Stop(Exception):
    """Raised by :meth:`Budget.reserve` when the next call could pass the budget."""


class Budget:
    def __init__(self, max_cost: float | None, model: str):
        self.max_cost = max_cost
        self.spent = 0.0
        self.reserved = 0.0
        self.unknown = 0
        self.calls = 0
        self.price = None
        if max_cost is not None:
            self.price = price_per_token(model)
            if self.price is None:
                raise InputError(f"--max-cost: litellm has no price for {model}, so the budget cannot be enforced; "
                                 "drop --max-cost or use a model in litellm's price table")

    def reserve(self, prompt_tokens: int, max_tokens: int) -> float:
        if self.max_cost is None or self.price is None:
            return 0.0
        worst = prompt_tokens * self.price[0] + max_tokens * self.price[1]
        if self.spent + self.reserved + worst > self.max_cost:
            raise Stop("max_cost")
        self.reserved += worst
        return worst

    def settle(self, reserved: float, answer: Answer | None) -> None:
        self.reserved -= reserved
        if answer is not None:
            self.calls += 1
            if answer.cost_usd is None:
                self.unknown += 1
            else:
                self.spent += answer.cost_usd
