"""The fake upstream: its route table (``_upstream``), one backend per HTTP client
(``_backends``), the pages and JSON bodies it answers with, and the network guard that refuses
what no route answers (``_guard``, ``_hosts``, ``_refusal``, ``_names``).
"""
