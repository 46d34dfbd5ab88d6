"""privrepro.runner: the edge, the only reader of Hydra and omegaconf.

:mod:`.cli` (the ``privrepro`` command) and :mod:`.all` (``make figures``) run figures through
:mod:`.plan` (config → recipe → validated params → units → preflight) and :mod:`.run` (units
computed into the store, the table derived, the plot drawn); :mod:`.figure_tables` derives a
figure's table from the store (``make tables``), :mod:`.replot` redraws plots (``make plots``).
"""
