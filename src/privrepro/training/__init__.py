"""privrepro.training: plain torch loops, DP-SGD and its hyperparameter studies.

Modules: :mod:`.classifier` (training and prediction loops), :mod:`.dpsgd` (DP-SGD through
opacus or per-sample clipping, calibrated by :mod:`privrepro.dp.accounting`), :mod:`.per_sample`
(clipped per-sample gradient sums without opacus), :mod:`.optuna_studies` (Optuna studies of
DP-SGD hyperparameters, kept in the run store and resumable), :mod:`.rows` (training data as
rows, on the host or the device).
"""
