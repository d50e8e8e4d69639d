"""The text evaluator: source loaders, answer sheets, premises/evidence, Table 7 expansion,
prompt rendering, answer parsing, OMIT frames and interventions."""
