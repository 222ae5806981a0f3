"""Suite-wide settings.

Hypothesis: the suite runs two xdist workers per core beside API server emulators, so a property
test can be descheduled for seconds (seen: "only 1 valid input after 4.22 seconds"). Its timing
checks (the per-example deadline, the slow-generation health check) then measure the machine, not
the code, so they are off; the properties and the number of examples are unchanged.
"""

from hypothesis import HealthCheck, settings

settings.register_profile("kubeloop-suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("kubeloop-suite")
