"""The embodied runner: instruction framings, the planner loop, the symbolic household simulator
(a gymnasium env with PARTNR's skills and evaluation semantics) and the episode generator."""
