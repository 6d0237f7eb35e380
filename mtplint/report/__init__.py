"""Stage 6 of the pipeline: reports (and later fixes)."""
