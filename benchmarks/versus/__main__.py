from benchmarks.versus.cli import main

main()
