"""The driver's side without a cluster: an unreachable cluster is an infra error with the cause, at once."""

from __future__ import annotations

import time

from conftest import TASKS

from passhat.trial import call_api


def test_unreachable_cluster_is_an_infra_error_with_the_cause(tmp_path):
    options = {
        "config": {
            "executor": "ray",
            "ray_address": "127.0.0.1:1",  # nothing listens there
            "state_dir": str(tmp_path / ".passhat"),
            "tasks_dir": str(TASKS),
            "fake_model_url": "http://passhat:secret@127.0.0.1:9",
        }
    }
    started = time.monotonic()
    response = call_api("p", options, {"vars": {"task_id": "py-median"}, "repeatIndex": 3})
    assert time.monotonic() - started < 15  # ray.init alone would wait forever
    assert response["error"].startswith("infrastructure error in task py-median trial 3: ray: cannot reach")
    assert "127.0.0.1:1" in response["error"] and "Connection refused" in response["error"]
    assert response["metadata"] == {
        "task_id": "py-median", "repeat_index": 3, "status": "infra_error", "scripted_model": True, "executor": "ray",
        "rateLimitKind": "quota",  # promptfoo's scheduler never reruns it (issue 23)
    }  # fmt: skip
