"""The text evaluator: source loaders, answer sheets, premises/evidence, Table 7 variant expansion,
prompt rendering, answer parsing, OMIT frames and interventions."""
