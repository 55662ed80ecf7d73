"""The ``hgin`` command line: play, replay, rules, and thin fronts for train/eval scripts.

It lives outside ``hgin_env`` because it imports the agents, training and evaluation
packages, and the engine package imports nothing above itself.
"""
