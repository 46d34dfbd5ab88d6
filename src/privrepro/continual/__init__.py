"""privrepro.continual — continual-learning machinery of the cl paper (Tobaben et al.).

Modules: :mod:`.scenarios` (class-incremental splits through continuum), :mod:`.blurry`
(i-Blurry / Si-Blurry), :mod:`.label_spaces` (S_data, S_prior, S_prior^const, dummy labels,
remapping, S_learned), :mod:`.cosine` (the DP cosine classifier, Alg. 1), :mod:`.features`
(frozen-backbone features and their cache), :mod:`.sources` (ImageNet-R, notMNIST, SVHN,
FashionMNIST images), :mod:`.benchmarks` (features + scenario per benchmark),
:mod:`.synthetic` (stand-in features), :mod:`.metrics` (AA_t, AF_t).
"""
