"""The census harvest (`portability census-harvest`): the manifests under cases/<framework>/census/
that the census stage runs. harvest.py loops over the frameworks' readers (pipeline/frameworks);
nn.py writes the NN-op manifests, the one census source that is not one framework's own (the
reviewed cases/nn_ops.yml, TensorFlow and JAX held to torch's samples).
"""
