"""Helpers shared by the tests and the benchmark scripts; no test module is imported from here,
and no benchmark imports a test module.

* :mod:`tests.support.noisy_agents`: fake agents noisy on every call, with planted case bugs,
  and the property tests run against them (``tests/stats/``, ``benchmarks/shrink_calls.py``,
  ``benchmarks/dependence.py``, ``benchmarks/plan_accuracy.py``);
* :mod:`tests.support.family_gates`: keyword gates with the formatting, injection and
  obfuscation bugs (``benchmarks/relation_families.py``);
* :mod:`tests.support.domain_agents`: agents of domains no strategy pack covers
  (``benchmarks/enlarge_domains.py``);
* :mod:`tests.support.drift_agents`: a gate whose verdicts flip on chosen inputs
  (``benchmarks/check_drift.py``);
* :mod:`tests.support.compare_agents`: identical agents for ``compare``
  (``benchmarks/compare_null.py``);
* :mod:`tests.support.routers`: a ticket router with one bug on one kind of edit
  (``tests/unit/test_edit_families.py``, ``benchmarks/edit_kinds.py``);
* :mod:`tests.support.scope_agents`: the negation-and-scope and two-number domains of
  ``enlarge`` (``tests/stats/test_enlarge_scope.py``);
* :mod:`tests.support.exact_runs`: the whole relation procedure at the tolerance
  (``tests/stats/test_relation_run_exact*.py``);
* :mod:`tests.support.sim`: the tolerance of a simulated error rate (:func:`sim_tolerance`)
  and the vectorised meter simulation.

Clopper-Pearson intervals come from :func:`agentverity_props.decide.clopper_pearson`.

A benchmark run as ``python benchmarks/x.py`` puts the repository root on ``sys.path`` and
imports ``tests.support.<module>``; pytest gets the root from ``pythonpath`` in pyproject.toml.
"""
