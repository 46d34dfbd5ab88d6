"""privrepro.boosting."""
