"""FramingQA: its build (sources -> contexts -> answer sheets -> Table 7 items), prompts and the
science of its report (metrics, tables, figures, option rotation)."""
