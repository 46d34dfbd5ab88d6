"""Figure recipes of paper ip."""
