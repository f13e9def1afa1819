"""Limiters: the rules (``_machine``, on the settings of ``_settings``), their pieces
(``_window``, ``_circuit``), the state they change (``_state``), where it lives (``_stores``,
``_redis``), the limiter (``_limiter``) and its parts (``_units``, ``_waits``, ``_stats``), and
what it says of a failure (``_failure``) and instead of a call (``_refusal``).

The public names are re-exported from ``pytest_nucleo``; import them from there.
"""
