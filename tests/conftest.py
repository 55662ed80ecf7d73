"""Shared fixtures."""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
import pytest


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


class FileProgress:
    """One line per test file as its last test finishes (``tests/test_x.py: 12 passed in
    3.4 s [120/860]``), so a long run shows where it is and which files cost the time; under
    pytest-xdist it runs in the controller, which learns the files' test counts from the
    workers' collections."""

    def __init__(self, reporter: object) -> None:
        self.reporter = reporter
        self.totals: Counter[str] = Counter()
        self.finished: Counter[str] = Counter()
        self.outcomes: dict[str, Counter[str]] = defaultdict(Counter)
        self.seconds: Counter[str] = Counter()
        self.done = 0

    def expect(self, nodeids: list[str]) -> None:
        if not self.totals:
            self.totals = Counter(nodeid.split("::")[0] for nodeid in nodeids)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.expect([item.nodeid for item in session.items])

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: object, ids: list[str]) -> None:
        self.expect(ids)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        path = report.nodeid.split("::")[0]
        self.seconds[path] += report.duration
        if report.when == "call" or (report.when == "setup" and not report.passed):
            self.outcomes[path]["error" if report.when == "setup" and report.failed else report.outcome] += 1
        elif report.when == "teardown" and report.failed:
            self.outcomes[path]["error"] += 1
        if report.when != "teardown":
            return
        self.finished[path] += 1
        self.done += 1
        if self.finished[path] == self.totals.get(path):
            counts = ", ".join(f"{n} {outcome}" for outcome, n in sorted(self.outcomes[path].items()))
            if self.reporter._tw.width_of_current_line:  # after the progress dots
                self.reporter.write("\n")
            self.reporter.write_line(f"{path}: {counts} in {self.seconds[path]:.1f} s "
                                     f"[{self.done}/{sum(self.totals.values())}]")


#: The tests ``make test-quick`` leaves out (``-m "not slow"``): whole files of Ray, browser,
#: notebook and documentation-example runs, and every other test that took 3 s or more on 2
#: cores (``make test`` prints the slowest; ``make test`` still runs them all). Kept here, in
#: one list, rather than as decorators spread over the files; a name that no longer matches a
#: collected test fails the run.
SLOW_FILES = {"tests/test_rllib.py", "tests/test_web_browser.py", "tests/test_notebooks.py",
              "tests/test_doc_examples.py"}
SLOW_TESTS = {
    "tests/test_checkpoints_load_below_train.py::test_every_committed_rllib_checkpoint_loads_and_plays_without_train",
    "tests/test_search.py::test_plays_legal_moves_within_its_budget",
    "tests/test_env.py::test_hundred_seeded_matches_end_with_valid_scoreboard_and_replay",
    "tests/test_env_refusals.py::test_refused_actions_leave_every_field_unchanged",
    "tests/test_web_api.py::test_whole_match_against_random_leaks_nothing",
    "tests/test_env_formats.py::test_cached_context_equals_fresh",
    "tests/test_exploit.py::test_several_probe_seeds_report_each_their_mean_and_maximum",
    "tests/test_vector_formats.py::test_learner_acts_at_its_seats_and_is_paid_the_seats_outcome",
    "tests/test_brute_settle.py::test_settle_random_default",
    "tests/test_adapter_formats.py::test_episode_rewards_add_up_to_the_seats_return",
    "tests/test_rewards.py::test_batched_learner_shaping_telescopes",
    "tests/test_adapter.py::test_maskable_ppo_learns_through_subproc_vec_env",
    "tests/test_train.py::test_a_format_trains_on_the_batched_engine_by_default",
    "tests/test_vector_formats.py::test_batched_expert_and_simple_decide_as_the_scalar_agents_in_every_format",
    "tests/test_tournament_resume.py::test_sigint_keeps_matches_and_rerun_plays_the_rest",
    "tests/test_bad_files.py::test_no_traceback_as_a_process",
    "tests/test_batched_expert.py::test_same_decisions_as_the_scalar_expert_on_every_duel_profile",
    "tests/test_resume.py::test_resumed_logs_have_no_lost_or_duplicated_rows",
    "tests/test_adapter_formats.py::test_seeded_reset_reproduces_the_episode",
    "tests/test_resume.py::test_resume_reaches_the_runs_total",
    "tests/test_web_server.py::test_meta_answers_while_steps_run",
    "tests/test_select_checkpoint.py::test_selection_evaluates_every_checkpoint_and_resumes",
    "tests/test_docs.py::test_every_link_of_the_site_resolves_on_the_site",
    "tests/test_rewards.py::test_batched_rewards_equal_scalar",
    "tests/test_openspiel.py::test_lockstep_hands_differ_only_by_the_rules_table",
    "tests/test_web_server.py::test_slow_header_connection_is_cut",
    "tests/test_adapter_formats.py::test_three_hand_reward_is_the_seats_reward_and_summary_matches_the_sheet",
    "tests/test_env_formats.py::test_agents_masks_and_observations",
    "tests/test_formats.py::test_partnership_matches_against_model",
    "tests/test_brute_settle.py::test_settle_random_knock_limits_and_multiplier",
    "tests/test_batched_agents.py::test_policy_one_call_equals_ppo_agent",
    "tests/test_train.py::test_the_pinned_demo_trains_the_same_network_whatever_the_kernels_and_threads",
}


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # A listed test must exist in its module (checked on the modules collected, whole, even
    # when only some of their tests were selected on the command line).
    modules = {item.nodeid.split("::")[0]: item.module for item in items if getattr(item, "module", None)}
    stale = {name for name in SLOW_TESTS if name.split("::")[0] in modules
             and not hasattr(modules[name.split("::")[0]], name.split("::")[-1])}
    if stale:
        raise pytest.UsageError(f"tests/conftest.py SLOW_TESTS names tests that do not exist: {sorted(stale)}")
    for item in items:
        if item.nodeid.split("::")[0] in SLOW_FILES or item.nodeid.split("[")[0] in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(trylast=True)  # after the terminal reporter is registered
def pytest_configure(config: pytest.Config) -> None:
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and not hasattr(config, "workerinput"):
        config.pluginmanager.register(FileProgress(reporter), "hgin-file-progress")
