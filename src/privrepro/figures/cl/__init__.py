"""Figure recipes of paper cl."""
