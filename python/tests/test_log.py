"""The library's log in Python's logging (issue 41, item 3): the records reach the logger "ziggurat"
at their levels (debug, info, warning, error as logging's), the logger's level decides which are
made, and records logged with the GIL released, on any thread, arrive when the call returns, or
between a long run's tasks."""

import logging
import threading

import numpy as np
import scipy.sparse as sp

import ziggurat


def messages(caplog, level=logging.DEBUG):
    return [r.getMessage() for r in caplog.records if r.name == "ziggurat" and r.levelno >= level]


def laplace1d(n=200):
    return sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1], format="csr")


def test_the_heat_plan_reaches_the_ziggurat_logger_at_info(context, profile, caplog):
    with caplog.at_level(logging.INFO, logger="ziggurat"):
        ziggurat.heat(np.zeros((40, 40), np.float32), 4, context=context, profile=profile)
    plans = [r for r in caplog.records if r.name == "ziggurat" and r.getMessage().startswith("plan: heat on ")]
    assert len(plans) == 1 and plans[0].levelno == logging.INFO, messages(caplog)
    assert "s predicted" in plans[0].getMessage()


def test_an_autotuning_decision_is_logged_with_what_won(context, caplog):
    with caplog.at_level(logging.INFO, logger="ziggurat"):
        ziggurat.solve(laplace1d(), np.ones(200), kernel="auto", context=context)
    tuning = [m for m in messages(caplog, logging.INFO) if m.startswith("tuning: 'bsr ")]
    assert len(tuning) == 1, messages(caplog)
    assert " wins" in tuning[0] or "from the tuning record" in tuning[0]


def test_records_below_the_loggers_level_do_not_arrive(context, profile, caplog):
    with caplog.at_level(logging.WARNING, logger="ziggurat"):
        ziggurat.heat(np.zeros((40, 40), np.float32), 4, context=context, profile=profile)
    assert not [r for r in caplog.records if r.name == "ziggurat" and r.levelno < logging.WARNING]


def test_a_call_on_another_thread_delivers_its_records_too(context, profile, caplog):
    def work():
        ziggurat.poisson(np.zeros((10, 10, 10)), max_sweeps=4, context=context, profile=profile)

    with caplog.at_level(logging.INFO, logger="ziggurat"):
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
    assert any(m.startswith("plan: poisson on ") for m in messages(caplog, logging.INFO)), messages(caplog)


def test_a_long_runs_records_arrive_between_its_tasks(context, profile, caplog):
    seen = []  # the records delivered when each progress callback came

    def progress(_):
        seen.append(list(messages(caplog, logging.INFO)))

    with caplog.at_level(logging.INFO, logger="ziggurat"):
        ziggurat.heat(np.zeros((40, 40), np.float32), 8, mode="strip", height=2, progress=progress, context=context,
                      profile=profile)
    assert seen and any(m.startswith("plan: heat on ") for m in seen[0]), seen
