"""`python -m kubeloop`: the `kubeloop` command line, for when the script is not on PATH."""

from kubeloop.cli.main import main

if __name__ == "__main__":
    main(prog_name="kubeloop")
