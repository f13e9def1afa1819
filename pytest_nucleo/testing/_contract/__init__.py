"""The failure contract as checks: the scenarios and what each expects (``_scenarios``), the
wording and hygiene checks on a model text, and the failure matrix a run reports and gates on
(``_report``). ``ToolContract`` (``testing/_tool_contract.py``) builds its suite from these
scenarios and from the recorded ones (``testing/_recorded``), above both.
"""
