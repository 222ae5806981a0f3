from kubeloop.cli.demo import run_demo


async def test_demo_runs_green(capsys) -> None:  # type: ignore[no-untyped-def]
    assert await run_demo() == 0
    out = capsys.readouterr().out
    assert "the watch saw ADDED -> MODIFIED -> MODIFIED -> DELETED" in out
    assert "demo finished: OK" in out
