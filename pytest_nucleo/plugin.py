"""The pytest11 entry point of pytest-nucleo.

Loaded by pytest through the ``nucleo`` entry point (or ``-p pytest_nucleo.plugin`` when
``PYTEST_DISABLE_PLUGIN_AUTOLOAD`` is set). It must stay light: importing it pulls in neither
respx, syrupy nor hypothesis; fixtures import what they need when they run.
"""

from __future__ import annotations
