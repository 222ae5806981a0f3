"""The PeriodicJob (CronJob-style) controller: a due Job is started and reported at once."""

from __future__ import annotations

from typing import Any

from kubeloop import Client, Manager
from kubeloop.testing import eventually

from .controller import PERIODIC_JOB, SCHEDULED_AT, install_crd, make_controller

TEMPLATE = {"spec": {"backoffLimit": 0, "template": {"spec": {
    "restartPolicy": "Never", "containers": [{"name": "work", "image": "busybox:1.36", "command": ["true"]}]}}}}


async def test_a_due_job_is_started_and_reported_promptly(client: Client, namespace: str) -> None:
    ns = namespace
    await install_crd(client)
    manager = Manager(client)
    manager.add(make_controller())
    async with manager:
        await client.create({"apiVersion": "examples.kubeloop.dev/v1", "kind": "PeriodicJob",
                             "metadata": {"name": "backup", "namespace": ns},
                             "spec": {"intervalSeconds": 3600, "jobTemplate": TEMPLATE}})

        async def reported() -> dict[str, Any] | None:
            st = (await client.get(PERIODIC_JOB, "backup", namespace=ns)).get("status") or {}
            return st if st.get("active") or st.get("succeeded") or st.get("failed") else None

        # the reconcile wrote the status before it created the Job; the Job's creation
        # reconciles the PeriodicJob again, so the status shows it now, not in an hour
        status = await eventually(reported)
        jobs = [j for j in await client.list("batch/v1/Job", namespace=ns)
                if j["metadata"]["name"].startswith("backup-")]
        assert len(jobs) == 1  # one slot, one Job, however many reconciles ran
        job = jobs[0]
        assert job["metadata"]["ownerReferences"][0]["name"] == "backup"
        assert job["metadata"]["name"] in status.get("active", []) or status.get("succeeded") == 1
        assert status["lastScheduleTime"]
        assert job["metadata"]["annotations"][SCHEDULED_AT] == job["metadata"]["name"].removeprefix("backup-")
