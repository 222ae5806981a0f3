"""The emulated kube-apiserver."""
