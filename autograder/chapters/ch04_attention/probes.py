"""Cases, test doubles and probes of this chapter (torch and the standard library only)."""


def make_cases(exercise_id):
    raise KeyError(exercise_id)


def run_case(module, exercise_id, case_name, case, device):
    raise KeyError(exercise_id)
