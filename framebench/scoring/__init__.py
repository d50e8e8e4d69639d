"""The strict-scoring layer: pure functions from a records frame to metrics (one module per suite)
and report rendering."""
