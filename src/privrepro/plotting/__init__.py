"""privrepro.plotting: the one plot style every figure uses (colour-blind-safe, PNG and PDF)."""
