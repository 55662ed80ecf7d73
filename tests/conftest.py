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


#: The tests ``make test-quick`` leaves out (``-m "not slow"``), so that the edit loop takes
#: under a minute on 2 cores: whole files of Ray, browser, notebook, documentation-example and
#: search-game runs, and every other test that took 1 s or more (its fixtures' set-up
#: included) in a quick-lane run on 2 cores (``make test`` prints the slowest and still runs
#: them all). Kept here, in one list, rather than as decorators spread over the files; a name
#: that no longer matches a collected test fails the run.
SLOW_FILES = {"tests/test_rllib.py", "tests/test_web_browser.py", "tests/test_notebooks.py",
              "tests/test_doc_examples.py", "tests/test_search_games.py", "tests/test_resume.py",
              "tests/test_inference.py"}
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
    "tests/test_adapter_formats.py::test_seeded_reset_reproduces_the_episode",
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
    "tests/test_policy_stack.py::test_stacked_forward_equals_each_policys_own",
    "tests/test_policy_stack.py::test_the_league_plays_as_with_one_forward_per_opponent",
    "tests/test_train.py::test_the_pinned_demo_trains_the_same_network_whatever_the_kernels_and_threads",
    # 1 s or more in the quick lane (measured 2026-12-04, README "Two commands"):
    "tests/test_format_warm_start.py::test_widened_duel_network_reads_the_duel_columns_alone",
    "tests/test_average.py::test_lineage_is_kept_with_whether_any_stage_imitated",
    "tests/test_average.py::test_average_refuses_what_cannot_be_averaged",
    "tests/test_rewards.py::test_shaping_telescopes_on_whole_matches",
    "tests/test_adapter_formats.py::test_gymnasium_env_checker_passes_for_every_format",
    "tests/test_env_formats.py::test_shaping_with_formats",
    "tests/test_adapter_formats.py::test_every_seat_is_drawn_and_fixed_seats_hold",
    "tests/test_env_formats.py::test_api_hollywood_formats",
    "tests/test_train.py::test_agent_acts_legally_and_gives_probabilities",
    "tests/test_results_table.py::test_pairs_pool_folders_and_flip",
    "tests/test_results_table.py::test_table_and_aliases",
    "tests/test_search_formats.py::test_one_agent_remembers_each_of_its_seats",
    "tests/test_train.py::test_toy_training_on_the_previous_path",
    "tests/test_average.py::test_average_is_the_mean_of_the_weights_and_loads",
    "tests/test_policy_relations.py::test_knock_bound_keeps_play_on_sampled_and_the_sign_of_knock_minus_discard",
    "tests/test_properties.py::test_scores_never_added_to_a_decided_column",
    "tests/test_agents.py::test_expert_always_goes_gin_and_random_is_uniform",
    "tests/test_cli_formats.py::test_play_a_format_against_its_learned_policy",
    "tests/test_rewards.py::test_lookahead_potential_is_the_expected_deadwood_after_one_draw",
    "tests/test_tournament.py::test_simple_beats_random_and_files",
    "tests/test_web_api.py::test_finished_and_watched_games_refuse_moves",
    "tests/test_vector_formats.py::test_sb3_vec_env_in_a_format_with_a_privileged_critic",
    "tests/test_search.py::test_prior_and_policy_rollouts_play_legal_reproducible_moves",
    "tests/test_search.py::test_plays_gin_classic_without_the_first_upcard_offer",
    "tests/test_exploit.py::test_an_existing_run_folder_is_refused",
    "tests/test_agents_formats.py::test_ppo_picks_the_shipped_policy_of_the_layout",
    "tests/test_search_formats.py::test_format_search_ignores_hidden_cards",
    "tests/test_search.py::test_critic_search_ignores_hidden_cards",
    "tests/test_variance_engine.py::test_real_hands_correction_has_mean_zero_within_its_interval_and_tracks_the_points",
    "tests/test_variance_engine.py::test_the_tournament_reports_the_luck_adjusted_rate_and_resumes_it",
    "tests/test_variance_engine.py::test_the_luck_is_reproducible_and_leaves_play_alone_in_every_format",
    "tests/test_variance_engine.py::test_eval_hands_prints_both_figures",
    "tests/test_web_api.py::test_partnership_hand_number_is_the_same_everywhere",
    "tests/test_web_safety.py::test_listing_reads_each_file_once",
    "tests/test_search.py::test_same_seed_same_moves_and_reset_forgets",
    "tests/test_run.py::test_rllib_resume_merges_alike",
    "tests/test_rewards.py::test_seat_rewards_zero_sum_every_format",
    "tests/test_checkpoints_load_below_train.py::test_new_checkpoints_name_the_policy_where_it_lives",
    "tests/test_tournament.py::test_agent_against_itself_is_exactly_even",
    "tests/test_train.py::test_checkpoints_are_refused_with_clear_messages",
    "tests/test_web_api.py::test_replay_steps_through_a_saved_match",
    "tests/test_determinize.py::test_weighted_sampler_matches_enumeration",
    "tests/test_policy_relations.py::test_relation_features_count_partners_in_each_set",
    "tests/test_plots.py::test_legends_sit_below_the_panels",
    "tests/test_search.py::test_the_critic_search_keeps_a_time_budget_and_a_world_budget_is_reproducible",
    "tests/test_docs.py::test_sphinx_roles_resolve_where_the_docstring_stands",
    "tests/test_tournament.py::test_too_few_seeds_get_no_interval",
    "tests/test_tournament_formats.py::test_every_agent_plays_every_seat_on_the_same_deals",
    "tests/test_scratch_policy.py::test_scratch_policy_loads_by_spec_and_plays",
    "tests/test_soak_batched.py::test_batched_soak_every_two_player_profile_without_violations",
    "tests/test_adapter.py::test_gymnasium_env_checker_passes",
    "tests/test_adapter.py::test_seeded_reset_reproduces_episode",
    "tests/test_adapter_formats.py::test_maskable_ppo_learns_and_checkpoints_load_with_the_format_layout",
    "tests/test_adapter_formats.py::test_partner_option",
    "tests/test_adapter_formats.py::test_partners_share_the_team_reward",
    "tests/test_agents.py::test_full_matches_legal",
    "tests/test_agents.py::test_legal_over_many_hands",
    "tests/test_batch.py::test_batch_matches_game_step_by_step",
    "tests/test_batch.py::test_matches_end_and_restart_with_recorded_seeds_in_every_reward_mode",
    "tests/test_batch_load.py::test_loaded_rows_go_on_as_their_games",
    "tests/test_batch_load_formats.py::test_loaded_rows_go_on_as_their_matches",
    "tests/test_batch_refusals.py::test_batchgame_step_refuses_negative_nan_inf_float_string_shape_and_moves_nothing",
    "tests/test_batched_agents.py::test_policy_probabilities_are_the_distributions_bit_for_bit",
    "tests/test_batched_expert.py::test_same_decisions_in_every_format_layout",
    "tests/test_batched_expert.py::test_same_decisions_with_other_parameters",
    "tests/test_batched_play.py::test_rows_equal_play_match_for_deterministic_agents",
    "tests/test_bench.py::test_bench_tiny_without_anchors",
    "tests/test_bench.py::test_commits_bench_runs_at_toy_size",
    "tests/test_brute_melds.py::test_best_melds_random_meldy",
    "tests/test_brute_melds.py::test_brute_min_deadwood_is_partition_minimum",
    "tests/test_brute_melds.py::test_deadwood_after_discard_random",
    "tests/test_brute_scoreboard.py::test_scoreboard_random_default",
    "tests/test_brute_settle.py::test_defender_reply_is_settles_reply_and_the_brute_optimum",
    "tests/test_brute_settle.py::test_settle_random_profiles",
    "tests/test_checked_once.py::test_run_match_checks_each_answer_once",
    "tests/test_checkpoints_load_below_train.py::test_every_committed_checkpoint_loads_and_plays_without_train",
    "tests/test_checkpoints_load_below_train.py::test_new_rllib_checkpoints_name_the_module_where_it_lives",
    "tests/test_cli.py::test_play_through_a_real_pipe_and_light_import",
    "tests/test_cli.py::test_replay_refusal_in_a_subprocess",
    "tests/test_cli_formats.py::test_play_a_format_against_the_search",
    "tests/test_cli_play.py::test_play_and_resume_against_the_search_by_name",
    "tests/test_compiled_engine.py::test_both_engines_give_the_same_games_from_the_same_seed",
    "tests/test_compiled_engine.py::test_compiled_scalar_observations_equal_the_python_reference",
    "tests/test_compiled_engine.py::test_showdown_kernel_big_gin_and_profiles_bonuses",
    "tests/test_compiled_engine.py::test_showdown_kernel_equals_settle_on_random_hands",
    "tests/test_determinize.py::test_samples_are_consistent_and_continue_legally",
    "tests/test_determinize.py::test_samples_leak_nothing",
    "tests/test_docs.py::test_api_pages_render_sphinx_roles_as_cross_references",
    "tests/test_docs.py::test_docs_build_fails_on_a_broken_anchor",
    "tests/test_docs.py::test_engine_imports_point_down_and_form_no_circle",
    "tests/test_docs.py::test_every_import_points_down",
    "tests/test_env.py::test_pettingzoo_api_test",
    "tests/test_env.py::test_uniform_random_match_terminates",
    "tests/test_env_copy.py::test_copies_mid_match_continue_identically",
    "tests/test_env_formats.py::test_api_and_seed",
    "tests/test_env_formats.py::test_duel_trajectories_bit_identical_to_recorded",
    "tests/test_env_formats.py::test_rewards_zero_sum_partners_identical",
    "tests/test_env_refusals.py::test_env_checks_hold_under_python_O",
    "tests/test_exploit.py::test_a_best_response_warm_started_from_a_privileged_critic_keeps_it",
    "tests/test_exploit.py::test_a_ppo_policy_is_probed_and_evaluated_against",
    "tests/test_exploit.py::test_a_warm_started_best_response_takes_the_start_network",
    "tests/test_exploit.py::test_the_probe_is_reproducible_from_its_seed",
    "tests/test_exploit.py::test_the_run_folder_holds_the_curve_the_plot_and_the_result",
    "tests/test_format_properties.py::test_every_match_ends_with_zero_sum_returns",
    "tests/test_format_warm_start.py::test_train_format_from_a_duel_checkpoint",
    "tests/test_formats.py::test_duel_match_replays_game_exactly",
    "tests/test_formats.py::test_sheet_against_model_on_random_sequences",
    "tests/test_formats.py::test_three_hand_matches_against_model",
    "tests/test_league.py::test_toy_league_run_logs_members_and_resumes_with_its_league",
    "tests/test_openspiel.py::test_lockstep_sees_a_planted_difference",
    "tests/test_openspiel.py::test_the_bot_agent_decides_as_the_bot_on_the_real_state",
    "tests/test_plots.py::test_learning_curves",
    "tests/test_policy_relations.py::test_toy_run_with_relations_saves_a_loadable_agent",
    "tests/test_properties.py::test_every_match_of_random_legal_play_ends",
    "tests/test_render_image.py::test_format_pictures_show_the_whole_match",
    "tests/test_results_table.py::test_ratings_have_bootstrap_intervals_around_them_and_the_plot_draws",
    "tests/test_results_table.py::test_the_readme_and_results_tables_are_what_their_command_prints",
    "tests/test_resume_stream.py::test_train_ppo_resume_keeps_the_last_train_metrics_row",
    "tests/test_search_formats.py::test_format_search_is_reproducible_and_plays_whole_matches",
    "tests/test_train.py::test_a_run_shorter_than_eval_every_evaluates_at_its_end_and_prints_a_summary",
    "tests/test_train.py::test_demo_main_job_at_toy_size",
    "tests/test_train.py::test_reload_evaluate_and_resume",
    "tests/test_train.py::test_toy_training_writes_the_run_folder",
    "tests/test_vector.py::test_learner_always_acts_and_matches_finish",
    "tests/test_vector_formats.py::test_batched_duplicate_rows_equal_play_match_in_a_format",
    "tests/test_web_api.py::test_formats_seat_the_search",
    "tests/test_web_api.py::test_match_winner_fields_are_named",
    "tests/test_web_safety.py::test_save_folder_is_bounded",
    "tests/test_web_server.py::test_idle_connections_of_one_address_make_room_and_busy_ones_get_a_json_503",
    "tests/test_web_server.py::test_server_drawn_seeds_are_63_bit_and_hidden_until_the_end",
    "tests/test_web_server.py::test_sigkill_mid_game_then_resume_with_the_seat_token",
    "tests/test_web_server.py::test_slow_body_is_refused",
}


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # tests/test_slow_lane.py checks that every listed test exists (a clear failure there;
    # an error raised here would only crash pytest-xdist's workers).
    for item in items:
        if item.nodeid.split("::")[0] in SLOW_FILES or item.nodeid.split("[")[0] in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(trylast=True)  # after the terminal reporter is registered
def pytest_configure(config: pytest.Config) -> None:
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and not hasattr(config, "workerinput"):
        config.pluginmanager.register(FileProgress(reporter), "hgin-file-progress")
