"""Limiters: the rules (``_machine``), their pieces (``_window``, ``_circuit``), the state they
change (``_state``), where it lives (``_stores``, ``_redis``) and the limiter (``_limiter``).

The public names are re-exported from ``pytest_nucleo``; import them from there.
"""
