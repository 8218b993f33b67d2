"""Leaves every stage may use: progress lines (progress), the option records
(options), the tool's error types (errors), where the templates are
(templates), the generator's digest (digest), temporary work directories
with the one reaper of dead runs (workdirs) and the stopping signals a run
cannot lose (interrupts).

Imports: the standard library only; nothing from the stages or the pipeline.
"""
