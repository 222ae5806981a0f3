"""The examples' tests get their fixtures (`apiserver`, `client`, `namespace`: the emulator, or the
real cluster of KUBELOOP_TEST_KUBECONFIG) from kubeloop's pytest plugin
(`kubeloop.testing.pytest_plugin`), and wait with `kubeloop.testing.eventually`, as they would in a
user's project."""
