"""The failure contract as checks: the scenarios and what each expects (``_scenarios``), the
``ToolContract`` suite built from them (``_suite``), the wording and hygiene checks on a model
text, and the failure matrix a run reports and gates on (``_report``).
"""
