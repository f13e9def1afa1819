"""The runner: tools called with the arguments a model sent, and what the model reads back.

The pieces, each importing only those below it (none imports the face, ``_tools``):

- ``_tools``: the public face: ``run_tool``, ``arun_tool``, ``run_sync`` and the ``tool`` decorator.
- ``_stops``: the runner's own stops around an async call, its timeout and its cancel token.
- ``_call``: the call's lifecycle, attempt after attempt, in sync code or under asyncio.
- ``_permits``: the limiters' side of a call: permits handed back, failures told.
- ``_retries``: the retry options, the retry budget and its backoff, the SDK-retry warning.
- ``_binding``: the model's arguments fitted to a tool's signature, and the tool's facts.
- ``_log``: the runner's logger and the masked copies of a failure its records carry.
- ``_results``: ToolResult, RetriesExhaustedException, CancelToken, ToolInfo, the success text.

This file imports no piece, so importing one piece does not load the face.
"""

import logging

# A library adds no handler but NullHandler: the application decides where records go. Here,
# so that it is added whichever of the runner's names is used first.
logging.getLogger("pytest_nucleo").addHandler(logging.NullHandler())
