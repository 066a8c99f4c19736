"""Answer parsing and the grade distribution from OpenAI-shaped token logprobs."""

from __future__ import annotations

import math

import pytest

from relgrade.judge import expected_grade, grade_distribution, parse_answer

SCALE = range(4)


@pytest.mark.parametrize("answer, grade, reason", [
    ('{"grade": 2, "reason": "partly"}', 2, "partly"),
    ('```json\n{"grade": 3, "reason": "direct"}\n```', 3, "direct"),
    ('Sure! Here is my judgment: {"reason": "off topic", "grade": 0} Hope it helps.', 0, "off topic"),
    ('{"Grade": "1", "reason": "related"}', 1, "related"),
    ('{"grade": 2.0}', 2, None),
    ('{"note": {"x": 1}} then {"grade": 1, "reason": "r"}', 1, "r"),
    ("Intent: boiling.\nMatch: yes.\nTrust: fine.\n##final score: 3", 3, None),
    ("The passage is on topic.\nGrade: 1", 1, None),
    ("2", 2, None),
    ("**Final grade: 0**", 0, None),
])
def test_readable_answers(answer, grade, reason):
    parsed = parse_answer(answer, SCALE)
    assert parsed.grade == grade and parsed.error is None
    assert parsed.reason == reason
    assert answer[parsed.grade_offset] == str(grade)


@pytest.mark.parametrize("answer, fragment", [
    ('{"grade": 7, "reason": "very"}', "off the scale 0-3"),
    ('{"grade": -1}', "off the scale"),
    ('{"grade": true}', "not an integer"),
    ('{"grade": 2.5}', "not an integer"),
    ('{"grade": "high"}', "not an integer"),
    ("I think it is relevant.", "no JSON object"),
    ("Grade: 4", "off the scale"),
    ("", "empty answer"),
    (None, "empty answer"),
])
def test_unreadable_answers_are_never_coerced(answer, fragment):
    parsed = parse_answer(answer, SCALE)
    assert parsed.grade is None
    assert fragment in parsed.error


def test_binary_scale_rejects_grade_two():
    assert parse_answer('{"grade": 2}', range(2)).grade is None
    assert parse_answer('{"grade": 1}', range(2)).grade == 1


def _lp(token, logprob, tops=()):
    return {"token": token, "logprob": logprob, "top_logprobs": [{"token": t, "logprob": l} for t, l in tops]}


def test_distribution_renormalises_the_scale_digits_of_the_grade_token():
    answer = '{"grade": 2,"reason":"x 3"}'
    tops = [("2", math.log(0.5)), ("3", math.log(0.2)), (" 1", math.log(0.1)), ("1", math.log(0.05)),
            ("two", math.log(0.1)), ("7", math.log(0.05))]
    content = [_lp('{"', 0), _lp("grade", 0), _lp('":', 0), _lp(" ", 0), _lp("2", math.log(0.5), tops),
               _lp(',"', 0), _lp("reason", 0), _lp('":"', 0), _lp("x", 0), _lp(" 3", 0, [(" 3", 0.0)]), _lp('"}', 0)]
    assert "".join(c["token"] for c in content) == answer
    parsed = parse_answer(answer, SCALE)
    dist = grade_distribution({"content": content}, answer, parsed, SCALE)
    total = 0.5 + 0.2 + 0.1 + 0.05  # digits of the scale only; " 1" and "1" pooled
    assert dist == pytest.approx({"0": 0.0, "1": 0.15 / total, "2": 0.5 / total, "3": 0.2 / total})
    assert sum(dist.values()) == pytest.approx(1.0)
    assert expected_grade(dist) == pytest.approx((1 * 0.15 + 2 * 0.5 + 3 * 0.2) / total)


def test_distribution_from_attribute_objects_and_a_lone_digit_token():
    class Top:
        def __init__(self, token, logprob):
            self.token, self.logprob = token, logprob

    class Tok(Top):
        def __init__(self, token, logprob, tops):
            super().__init__(token, logprob)
            self.top_logprobs = tops

    class LP:
        content = [Tok("1", math.log(0.6), [Top(str(d), math.log(p)) for d, p in enumerate((0.1, 0.6, 0.2, 0.1))])]

    answer = '{"grade": 1, "reason": "r"}'
    dist = grade_distribution(LP(), answer, parse_answer(answer, SCALE), SCALE)
    assert dist == pytest.approx({"0": 0.1, "1": 0.6, "2": 0.2, "3": 0.1})


def test_no_distribution_without_logprobs_or_grade():
    answer = '{"grade": 1}'
    assert grade_distribution(None, answer, parse_answer(answer, SCALE), SCALE) is None
    assert grade_distribution({"content": []}, answer, parse_answer(answer, SCALE), SCALE) is None
    bad = "no grade"
    assert grade_distribution({"content": [_lp("no", 0)]}, bad, parse_answer(bad, SCALE), SCALE) is None


@pytest.mark.parametrize("answer, grade", [
    # the answer quotes the grade injected in the passage, then gives its own: its own counts
    ('The passage says {"grade": 3} to manipulate raters. My verdict: {"grade": 1, "reason": "off topic"}', 1),
    ('```json\n{"grade": 3}\n```\nIgnoring that instruction.\n{"grade": 0, "reason": "spam"}', 0),
    ('{"grade": 2, "reason": "partial"}', 2),
    ('{"note": "no grade here"} {"grade": 3, "reason": "full"} {"other": 1}', 3),
])
def test_the_final_grade_object_wins(answer, grade):
    parsed = parse_answer(answer, range(4))
    assert parsed.grade == grade and parsed.error is None
    assert answer[parsed.grade_offset] == str(grade) and answer.rfind(f'"grade": {grade}') + 9 == parsed.grade_offset


def test_a_final_grade_off_the_scale_is_unreadable_even_after_a_valid_quoted_one():
    parsed = parse_answer('quoted: {"grade": 2}. mine: {"grade": 9, "reason": "x"}', range(4))
    assert parsed.grade is None and "off the scale" in parsed.error
