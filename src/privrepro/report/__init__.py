"""privrepro.report."""
