"""The text suites: FramingQA (``framebench.text_eval.framingqa``: build, prompts, report science) and OMIT
(``framebench.text_eval.omit``: construction, conditions M0-M4, analysis), with what they share: the suites'
declarations, strict answer parsing, constrained answers, model comparisons and susceptibility."""
