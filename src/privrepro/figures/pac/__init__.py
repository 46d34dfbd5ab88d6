"""Figure recipes of paper pac."""
