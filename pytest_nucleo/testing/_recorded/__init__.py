"""Recorded failures: what a recording holds (``_recording``), the formats it is read from
(VCR.py cassettes, HAR files), and the rows a ToolContract replays from them (``_replay``).
"""
