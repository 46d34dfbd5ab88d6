"""Figure recipes of paper pb."""
